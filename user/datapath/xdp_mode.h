/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * xdp_mode.h - the XDP modes and what an attach got, by name: what both
 * ways of attaching (attach.h alone, dispatcher.h in libxdp's
 * dispatcher) say.
 */
#ifndef XRL_XDP_MODE_H
#define XRL_XDP_MODE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

enum xrl_xdp_mode {
	XRL_XDP_AUTO = 0,	/* native, else generic (and say so) */
	XRL_XDP_NATIVE,
	XRL_XDP_GENERIC,
	XRL_XDP_OFFLOAD,	/* only ever reported, never requested */
	XRL_XDP_NONE,
};

/* "auto", "native", "generic"; -EINVAL for anything else. */
int xrl_xdp_mode_parse(const char *text, enum xrl_xdp_mode *mode);
const char *xrl_xdp_mode_name(enum xrl_xdp_mode mode);

struct xrl_attach_result {
	enum xrl_xdp_mode mode;		/* the mode it got */
	int native_err;			/* auto fell back: why (-errno) */
	__u32 link_id;			/* alone: the pinned link */
	bool chained;			/* in libxdp's dispatcher, and then: */
	__u32 prog_id;			/* the extension */
	__u32 dispatcher_id;
	unsigned priority;
	size_t others;			/* programs beside it */
	char fallback[256];		/* not chained: why ("" when it is) */
};

#endif
