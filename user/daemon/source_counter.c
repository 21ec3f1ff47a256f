// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * source_counter.c - the tracked sources, counted in a thread of their
 * own (source_counter.h).
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include "clock.h"
#include "mapwalk.h"
#include "source_counter.h"
#include "xrl.h"

static void count_once(struct xrl_source_counter *c)
{
	long n = xrl_map_count(c->buckets_fd, sizeof(struct xrl_bucket_key));

	if (n >= 0)
		__atomic_store_n(&c->count, n, __ATOMIC_RELAXED);
}

static void *counter_thread(void *arg)
{
	struct xrl_source_counter *c = arg;
	struct timespec until;
	uint64_t at;

	pthread_mutex_lock(&c->lock);
	while (!c->stop) {
		at = xrl_clock_ns(CLOCK_MONOTONIC) +
		     c->interval_ms * XRL_NS_PER_MS;
		until.tv_sec = (time_t)(at / XRL_NS_PER_S);
		until.tv_nsec = (long)(at % XRL_NS_PER_S);
		while (!c->stop && pthread_cond_timedwait(&c->wake, &c->lock,
							  &until) != ETIMEDOUT)
			;
		if (c->stop)
			break;
		pthread_mutex_unlock(&c->lock);
		count_once(c);
		pthread_mutex_lock(&c->lock);
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

int xrl_source_counter_start(struct xrl_source_counter *c, int buckets_fd,
			     uint64_t interval_ms)
{
	pthread_condattr_t attr;
	int ret;

	memset(c, 0, sizeof(*c));
	c->buckets_fd = buckets_fd;
	c->interval_ms = interval_ms ? interval_ms : 1;
	c->count = -1;
	count_once(c);
	pthread_mutex_init(&c->lock, NULL);
	pthread_condattr_init(&attr);
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	pthread_cond_init(&c->wake, &attr);
	pthread_condattr_destroy(&attr);
	ret = pthread_create(&c->thread, NULL, counter_thread, c);
	if (ret) {
		pthread_cond_destroy(&c->wake);
		pthread_mutex_destroy(&c->lock);
		return -ret;
	}
	c->running = true;
	return 0;
}

void xrl_source_counter_stop(struct xrl_source_counter *c)
{
	if (!c->running)
		return;
	pthread_mutex_lock(&c->lock);
	c->stop = true;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	pthread_cond_destroy(&c->wake);
	pthread_mutex_destroy(&c->lock);
	c->running = false;
}
