// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * log_libbpf.c - libbpf's and libxdp's messages through xrl_log.
 */
#include <stdarg.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "datapath.h"
#include "log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	xrl_vlog(level == LIBBPF_WARN ? XRL_LOG_WARN : XRL_LOG_DEBUG, fmt, ap);
	return 0;
}

static int libxdp_print(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	xrl_vlog(level == LIBXDP_WARN ? XRL_LOG_WARN : XRL_LOG_DEBUG, fmt, ap);
	return 0;
}

void xrl_log_libbpf(void)
{
	libbpf_set_print(libbpf_print);
	libxdp_set_print(libxdp_print);
}

static int libbpf_debug(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	xrl_vlog(XRL_LOG_DEBUG, fmt, ap);
	return 0;
}

static int libxdp_debug(enum libxdp_print_level level, const char *fmt,
			va_list ap)
{
	xrl_vlog(XRL_LOG_DEBUG, fmt, ap);
	return 0;
}

void xrl_log_libbpf_quiet(bool on)
{
	static libbpf_print_fn_t saved_libbpf;
	static libxdp_print_fn_t saved_libxdp;

	if (on) {
		saved_libbpf = libbpf_set_print(libbpf_debug);
		saved_libxdp = libxdp_set_print(libxdp_debug);
	} else {
		libbpf_set_print(saved_libbpf);
		libxdp_set_print(saved_libxdp);
	}
}
