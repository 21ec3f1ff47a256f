// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp_mode.c - the XDP modes by name (xdp_mode.h).
 */
#include <errno.h>
#include <string.h>
#include "xdp_mode.h"

static const char *const mode_names[] = {
	[XRL_XDP_AUTO] = "auto",
	[XRL_XDP_NATIVE] = "native",
	[XRL_XDP_GENERIC] = "generic",
	[XRL_XDP_OFFLOAD] = "offload",
	[XRL_XDP_NONE] = "none",
};

const char *xrl_xdp_mode_name(enum xrl_xdp_mode mode)
{
	return mode <= XRL_XDP_NONE ? mode_names[mode] : "?";
}

int xrl_xdp_mode_parse(const char *text, enum xrl_xdp_mode *mode)
{
	enum xrl_xdp_mode m;

	for (m = XRL_XDP_AUTO; m <= XRL_XDP_GENERIC; m++) {
		if (!strcmp(text, mode_names[m])) {
			*mode = m;
			return 0;
		}
	}
	return -EINVAL;
}
