// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "log.h"

static enum xrl_log_level max_level = XRL_LOG_INFO;

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
	fprintf(stderr, "%s: %s\n", level_names[level], line);
}

void xrl_log(enum xrl_log_level level, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	xrl_vlog(level, fmt, ap);
	va_end(ap);
}
