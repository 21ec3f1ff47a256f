/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * manual_bans.h - bans by hand (xdp-ratelimit ban|unban|bans): kept by
 * the daemon in its state directory, written into the program's
 * xrl_manual_bans (include/xrl.h), which expires them by its own clock.
 */
#ifndef XRL_MANUAL_BANS_H
#define XRL_MANUAL_BANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "bans.h"
#include "xrl.h"

#define XRL_BANS_NAME	"policy.bans.json"	/* beside the state file */
/* The furthest end a file's ban may have: the longest ban (30 days), and
 * a day for the wall clock set back since it was written. */
#define XRL_BANS_AHEAD_MS	(31ULL * 86400 * 1000)

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

/* Reads @b->path (none yet: no bans; state_file.h), forgetting bans that
 * ended. A file with any entry out of range (a /0, an end before 1970 or
 * beyond XRL_BANS_AHEAD_MS, more than the map holds) is refused whole:
 * one line in @err ("FILE: bans[I].FIELD: VALUE is ..."). */
int xrl_manual_bans_load(struct xrl_manual_bans *b, char *err, size_t len);
void xrl_manual_bans_free(struct xrl_manual_bans *b);

/* Makes the program's map hold exactly the bans of @b. 0 or -errno. */
int xrl_manual_bans_install(const struct xrl_manual_bans *b, int map_fd);

/* The wall clock the file keeps ends in (epoch ms). */
uint64_t xrl_manual_bans_now_ms(void);
/* Whether @e ended by @now_ms. */
bool xrl_manual_ban_ended(const struct xrl_manual_ban_entry *e,
			  uint64_t now_ms);
/* The program's entry of a ban (its end on the program's clock); its key:
 * xrl_manual_ban_key() (bans.h). */
void xrl_manual_ban_value(const struct xrl_manual_ban_entry *e,
			  uint64_t now_ms, struct xrl_manual_ban *value);
/* A ban as bans shows it, with what it dropped when @map_fd >= 0. */
json_t *xrl_manual_ban_json(const struct xrl_manual_ban_entry *e, int map_fd);

/* The list of @b without @drop, with room for @extra more (free() it);
 * NULL when out of memory. Bans that ended are the expiry's to lift
 * (xrl_daemon_expire_bans()), out of the map too. */
struct xrl_manual_ban_entry *
xrl_manual_bans_kept(const struct xrl_manual_bans *b,
		     const struct xrl_lpm_key *drop, size_t extra, size_t *n);
/* Writes @v (@n bans) to the file's temporary copy beside @path (renamed
 * into place by xrl_state_commit()). 0 or -errno with @err. */
int xrl_manual_bans_stage(const char *path, const struct xrl_manual_ban_entry *v,
			  size_t n, char *err, size_t len);

struct xrl_daemon_state;
/*
 * Lifts the bans of @state that ended by now: out of the program's map,
 * the list and the file, the program's lookup turned off with the last.
 * Returns the milliseconds to the next end, -1 when no ban has one.
 */
int xrl_daemon_expire_bans(struct xrl_daemon_state *state);

#endif
