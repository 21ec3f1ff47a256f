/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * log.h - one line per event on stderr, with a level. The daemon's lines
 * carry a syslog priority prefix ("<6>") when stderr is the journal, and
 * a UTC timestamp otherwise; the CLI's are plain.
 */
#ifndef XRL_LOG_H
#define XRL_LOG_H

#include <stdarg.h>
#include <stdbool.h>

enum xrl_log_level {
	XRL_LOG_ERROR = 0,
	XRL_LOG_WARN,
	XRL_LOG_INFO,
	XRL_LOG_DEBUG,
};

enum xrl_log_style {
	XRL_LOG_PLAIN = 0,	/* "LEVEL: message" */
	XRL_LOG_JOURNAL,	/* "<N>message" (sd-daemon(3)) */
	XRL_LOG_TIMESTAMP,	/* "2026-12-01T09:50:01.123Z LEVEL: message" */
};

/* The daemon's style: the journal's when JOURNAL_STREAM names stderr,
 * timestamps otherwise. */
void xrl_log_init_daemon(void);

/* Messages above @level are dropped; XRL_LOG_INFO unless set. */
void xrl_log_set_level(enum xrl_log_level level);

/* Writes "LEVEL: message\n" to stderr; newlines in the message become
 * spaces so one event stays one line. When stderr is the journal
 * (JOURNAL_STREAM), the line starts with its priority ("<6>info: ..."),
 * which journald takes off and keeps as the entry's priority. */
void xrl_log(enum xrl_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* The same with a va_list. */
void xrl_vlog(enum xrl_log_level level, const char *fmt, va_list ap);

#define pr_err(...)	xrl_log(XRL_LOG_ERROR, __VA_ARGS__)
#define pr_warn(...)	xrl_log(XRL_LOG_WARN, __VA_ARGS__)
#define pr_info(...)	xrl_log(XRL_LOG_INFO, __VA_ARGS__)
#define pr_debug(...)	xrl_log(XRL_LOG_DEBUG, __VA_ARGS__)

#endif
