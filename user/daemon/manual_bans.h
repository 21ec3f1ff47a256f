/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * manual_bans.h - bans by hand (xdp-ratelimit ban|unban|bans): kept by
 * the daemon in its state directory, written into the program's
 * xrl_manual_bans (include/xrl.h), which expires them by its own clock.
 */
#ifndef XRL_MANUAL_BANS_H
#define XRL_MANUAL_BANS_H

#include <stddef.h>
#include <stdint.h>
#include "xrl.h"

#define XRL_BANS_NAME	"policy.bans.json"	/* beside the state file */

struct xrl_manual_ban_entry {
	struct xrl_lpm_key prefix;	/* as xrl_cidr_parse() gives it */
	uint64_t until_ms;		/* wall clock (epoch ms); 0: lifted
					 * only by unban */
};

struct xrl_manual_bans {
	const char *path;		/* the file; NULL: kept nowhere */
	struct xrl_manual_ban_entry *v;
	size_t n;
};

/* Reads @b->path (none yet: no bans), forgetting bans that ended. One
 * line in @err on failure ("FILE: ..."). */
int xrl_manual_bans_load(struct xrl_manual_bans *b, char *err, size_t len);
void xrl_manual_bans_free(struct xrl_manual_bans *b);

/* Makes the program's map hold exactly the bans of @b. 0 or -errno. */
int xrl_manual_bans_install(const struct xrl_manual_bans *b, int map_fd);

#endif
