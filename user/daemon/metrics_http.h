/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * metrics_http.h - the daemon's /metrics and /healthz endpoints
 * (libmicrohttpd, in a thread of its own so that a scrape never holds up
 * the control socket).
 *
 * The scrape thread reads the maps through their fds (system calls, safe
 * beside the daemon's own) and the rule names from a copy of the policy
 * that the daemon hands over after each change, under a lock.
 */
#ifndef XRL_METRICS_HTTP_H
#define XRL_METRICS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
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

/* Whether @listen is an address xrl_metrics_server_start takes: 0, or
 * -EINVAL with "--metrics ...: what is wrong" in @err. */
int xrl_metrics_listen_check(const char *listen, char *err, size_t len);

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

/*
 * What /healthz checks: that each of @ifaces (the daemon's interfaces),
 * and each interface attached from the pins, runs the data path's
 * program, and that the rules map in force is @head_map_id, the one the
 * daemon applied. 0 or -ENOMEM.
 */
int xrl_metrics_server_health(struct xrl_metrics_server *srv,
			      char *const *ifaces, size_t n_ifaces,
			      __u32 head_map_id);

/* The last reload of the policy file: when it was tried, and whether
 * it was applied. */
void xrl_metrics_server_reload(struct xrl_metrics_server *srv, time_t at,
			       bool ok);

/* Families of a feature with state of its own, written at each scrape
 * from the scrape thread (the callback takes its own locks). */
void xrl_metrics_server_extra(struct xrl_metrics_server *srv,
			      xrl_metrics_extra_fn fn, void *ctx);

/* Writes why the budgets are degraded into @why (left empty when they
 * are not); called from the scrape thread (it takes its own locks). */
typedef void (*xrl_health_degraded_fn)(void *ctx, char *why, size_t len);

/* What makes /healthz answer "degraded: why" (still 200: the data path
 * enforces). */
void xrl_metrics_server_degraded(struct xrl_metrics_server *srv,
				 xrl_health_degraded_fn fn, void *ctx);

/* Stops serving (waits for a scrape in progress) and frees @srv. */
void xrl_metrics_server_stop(struct xrl_metrics_server *srv);

#endif
