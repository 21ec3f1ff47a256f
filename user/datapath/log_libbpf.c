// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * log_libbpf.c - libbpf's messages through xrl_log.
 */
#include <stdarg.h>
#include <bpf/libbpf.h>
#include "datapath.h"
#include "log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	xrl_vlog(level == LIBBPF_WARN ? XRL_LOG_WARN : XRL_LOG_DEBUG, fmt, ap);
	return 0;
}

void xrl_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
}
