/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * global.h - global budgets (global: true): an aggregate rule's budget
 * shared by every node of a fleet through Redis.
 */
#ifndef XRL_GLOBAL_H
#define XRL_GLOBAL_H

#include <stdint.h>

struct xrl_budgets;
struct xrl_global;

/* Follows the engine's rules after a policy change (sets their local
 * budget to what this node holds). */
void xrl_global_follow(struct xrl_global *g, struct xrl_budgets *b,
		       uint64_t now_ns);

/* One exchange with Redis for every global rule of @b. 0 or -errno. */
int xrl_global_sync(struct xrl_global *g, struct xrl_budgets *b,
		    uint64_t now_ns);

#endif
