/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * metrics_collect.h - the data path's counters into a struct xrl_metrics
 * (metrics.h writes it).
 */
#ifndef XRL_METRICS_COLLECT_H
#define XRL_METRICS_COLLECT_H

#include "metrics.h"

struct xrl_datapath;

/*
 * Reads the counters of the data path into @m: the global counters, the
 * table pressure counters and, for each of the @n_rules rules of @m->rules
 * (their ids and names set by the caller), its counters, reading each map
 * once (the rule counters in batches over the ids). Leaves
 * tracked_sources, evictions and the policy fields alone. 0 or -errno.
 */
int xrl_metrics_collect(const struct xrl_datapath *dp, struct xrl_metrics *m);

#endif
