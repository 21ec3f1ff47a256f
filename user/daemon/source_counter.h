/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * source_counter.h - the tracked sources, counted in a thread of their
 * own every interval. At a million sources a count reads the whole bucket
 * table (tens of ms); status and stats read the last count instead, so
 * the control socket answers in well under a millisecond whatever the
 * table holds.
 */
#ifndef XRL_SOURCE_COUNTER_H
#define XRL_SOURCE_COUNTER_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define XRL_SOURCE_COUNT_INTERVAL_MS 1000

struct xrl_source_counter {
	int buckets_fd;
	uint64_t interval_ms;
	long count; /* atomic; < 0 before the first */
	pthread_t thread;
	pthread_mutex_t lock; /* @stop, with @wake */
	pthread_cond_t wake;
	bool stop, running;
};

/* Counts once, then keeps counting every @interval_ms. 0 or -errno. */
int xrl_source_counter_start(struct xrl_source_counter *c, int buckets_fd,
			     uint64_t interval_ms);
void xrl_source_counter_stop(struct xrl_source_counter *c);

#endif
