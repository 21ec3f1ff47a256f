// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include "clock.h"
#include "log.h"

static enum xrl_log_level max_level = XRL_LOG_INFO;
static enum xrl_log_style style = XRL_LOG_PLAIN;

/* sd-daemon(3) priorities of the levels. */
static const char *const journal_prefix[] = {
	[XRL_LOG_ERROR] = "<3>",
	[XRL_LOG_WARN] = "<4>",
	[XRL_LOG_INFO] = "<6>",
	[XRL_LOG_DEBUG] = "<7>",
};

static const char *const level_names[] = {
	[XRL_LOG_ERROR] = "error",
	[XRL_LOG_WARN] = "warning",
	[XRL_LOG_INFO] = "info",
	[XRL_LOG_DEBUG] = "debug",
};

void xrl_log_set_level(enum xrl_log_level level)
{
	max_level = level;
}

/* JOURNAL_STREAM is "DEV:INODE" of the journal's stream: stderr is the
 * journal when it is that very file (systemd.exec(5)). */
static bool stderr_is_journal(void)
{
	const char *env = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	return env && sscanf(env, "%llu:%llu", &dev, &ino) == 2 &&
	       !fstat(fileno(stderr), &st) && st.st_dev == dev &&
	       st.st_ino == ino;
}

void xrl_log_init_daemon(void)
{
	style = stderr_is_journal() ? XRL_LOG_JOURNAL : XRL_LOG_TIMESTAMP;
}

static void write_line(enum xrl_log_level level, const char *line)
{
	uint64_t now_ns;
	char stamp[40];
	time_t now;
	struct tm tm;

	switch (style) {
	case XRL_LOG_JOURNAL:
		fprintf(stderr, "%s%s\n", journal_prefix[level], line);
		return;
	case XRL_LOG_TIMESTAMP:
		now_ns = xrl_clock_ns(CLOCK_REALTIME);
		now = (time_t)(now_ns / XRL_NS_PER_S);
		gmtime_r(&now, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(stderr, "%s.%03dZ %s: %s\n", stamp,
			(int)(now_ns % XRL_NS_PER_S / XRL_NS_PER_MS),
			level_names[level], line);
		return;
	default:
		fprintf(stderr, "%s: %s\n", level_names[level], line);
	}
}

void xrl_vlog(enum xrl_log_level level, const char *fmt, va_list ap)
{
	char line[1024];
	size_t len;
	char *c;

	if (level > max_level)
		return;
	vsnprintf(line, sizeof(line), fmt, ap);
	len = strlen(line);
	while (len && line[len - 1] == '\n')
		line[--len] = '\0';
	for (c = line; *c; c++)
		if (*c == '\n' || *c == '\r')
			*c = ' ';
	write_line(level, line);
}

void xrl_log(enum xrl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xrl_vlog(level, fmt, ap);
	va_end(ap);
}
