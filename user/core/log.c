// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "log.h"

static enum xrl_log_level max_level = XRL_LOG_INFO;

static const char *const level_names[] = {
	[XRL_LOG_ERROR] = "error",
	[XRL_LOG_WARN] = "warning",
	[XRL_LOG_INFO] = "info",
	[XRL_LOG_DEBUG] = "debug",
};

/* syslog priorities, as sd-daemon(3) prefixes them for the journal. */
static const char *const journal_prefixes[] = {
	[XRL_LOG_ERROR] = "<3>",
	[XRL_LOG_WARN] = "<4>",
	[XRL_LOG_INFO] = "<6>",
	[XRL_LOG_DEBUG] = "<7>",
};

void xrl_log_set_level(enum xrl_log_level level)
{
	max_level = level;
}

/*
 * Whether stderr is the journal's stream: systemd says so in
 * JOURNAL_STREAM ("DEV:INODE" of the stream it connected), which a
 * child redirecting stderr elsewhere inherits but no longer matches.
 */
static bool stderr_is_journal(void)
{
	static int known = -1;
	unsigned long long dev, ino;
	const char *stream;
	struct stat st;

	if (known >= 0)
		return known;
	stream = getenv("JOURNAL_STREAM");
	known = stream && sscanf(stream, "%llu:%llu", &dev, &ino) == 2 &&
		!fstat(fileno(stderr), &st) && st.st_dev == dev &&
		st.st_ino == ino;
	return known;
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
	fprintf(stderr, "%s%s: %s\n",
		stderr_is_journal() ? journal_prefixes[level] : "",
		level_names[level], line);
}

void xrl_log(enum xrl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xrl_vlog(level, fmt, ap);
	va_end(ap);
}
