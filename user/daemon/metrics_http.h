/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * metrics_http.h - the daemon's /metrics endpoint (libmicrohttpd, in a
 * thread of its own so that a scrape never holds up the control socket).
 *
 * The scrape thread reads the maps through their fds (system calls, safe
 * beside the daemon's own) and the rule names from a copy of the policy
 * that the daemon hands over after each change, under a lock.
 */
#ifndef XRL_METRICS_HTTP_H
#define XRL_METRICS_HTTP_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include "metrics.h"

struct xrl_datapath;
struct xrl_policy;
struct xrl_metrics_server;

/*
 * The bucket map is counted (read whole, in batches: 0.45 to 1.3 s at
 * a million sources on the test machine) at most this often, outside the lock;
 * scrapes in between show the last count.
 */
#define XRL_METRICS_COUNT_INTERVAL_S	10

/*
 * Serves /metrics on @listen ("127.0.0.1:9101", "[::1]:9101"). Returns
 * the server, or NULL with errno set and one line in @err.
 */
struct xrl_metrics_server *xrl_metrics_server_start(const char *listen,
						    const struct xrl_datapath *dp,
						    char *err, size_t len);

/* The rule names and ids, generation and time of the policy in force. */
int xrl_metrics_server_policy(struct xrl_metrics_server *srv,
			      const struct xrl_policy *policy,
			      uint64_t generation, time_t applied);

/* Families of a feature with state of its own, written at each scrape
 * from the scrape thread (the callback takes its own locks). */
void xrl_metrics_server_extra(struct xrl_metrics_server *srv,
			      xrl_metrics_extra_fn fn, void *ctx);

/* Stops serving (waits for a scrape in progress) and frees @srv. */
void xrl_metrics_server_stop(struct xrl_metrics_server *srv);

#endif
