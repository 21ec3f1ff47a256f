/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * log.h - one line per event on stderr, with a level, for the daemon
 * (journald and container runtimes add the time themselves).
 */
#ifndef XRL_LOG_H
#define XRL_LOG_H

#include <stdarg.h>

enum xrl_log_level {
	XRL_LOG_ERROR = 0,
	XRL_LOG_WARN,
	XRL_LOG_INFO,
	XRL_LOG_DEBUG,
};

/* Messages above @level are dropped; XRL_LOG_INFO unless set. */
void xrl_log_set_level(enum xrl_log_level level);

/* Writes "LEVEL: message\n" to stderr; newlines in the message become
 * spaces so one event stays one line. */
void xrl_log(enum xrl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same with a va_list. */
void xrl_vlog(enum xrl_log_level level, const char *fmt, va_list ap);

#define pr_err(...)	xrl_log(XRL_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)	xrl_log(XRL_LOG_WARN, __VA_ARGS__)
#define pr_info(...)	xrl_log(XRL_LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	xrl_log(XRL_LOG_DEBUG, __VA_ARGS__)

#endif
