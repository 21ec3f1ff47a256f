// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * micro_previous.c - the limiter against the previous data path (a host
 * of that commit's programs: prevhost.c), and against variants of itself
 * with a step removed (scripts/bench/eliminate) (micro.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "micro.h"
#include "policy_map.h"
#include "previous.h"
#include "ref.skel.h"
#include "rule.h"
#include "rules.h"

/*
 * Issue 14: with none of the new keys in the policy, every row within 2%
 * of the previous data path (the commit scripts/bench/previous built,
 * held by prevhost.c). The two programs run under the same wrapper over
 * the same traffic, alternating run by run, each with its own maps
 * filled by its own library; the ratio is current / previous.
 */
#define GOAL_PREVIOUS		1.02
#define GOAL_PREVIOUS_TEXT	"<= 1.02 (issue 14)"

static void row_previous(const struct prev_host *host, const char *what,
			 const struct side *cur, const struct side *prev)
{
	char name[256];

	snprintf(name, sizeof(name), "current vs previous data path (%s), %s",
		 host->commit, what);
	micro_row_ns(name, cur, prev, GOAL_PREVIOUS_TEXT, GOAL_PREVIOUS);
}

/*
 * Warms both sides for traffic @t, measures them side by side and prints
 * their row, @what.
 */
static int previous_pair(struct micro *m, struct prev_host *host,
			 enum traffic t, struct side *sides, const char *what)
{
	int ret = micro_warm(m, t, sides[0].prog_fd);

	if (!ret)
		ret = micro_warm(m, t, sides[1].prog_fd);
	if (!ret)
		ret = micro_side_by_side(m, t, sides, 2);
	if (!ret)
		row_previous(host, what, &sides[1], &sides[0]);
	return ret;
}

static int previous_rules(struct micro *m, struct prev_host *host,
			  size_t n_rules)
{
	struct side sides[2] = {
		{ .prog_fd = host->prog_fd },
		{ .prog_fd = m->dp.prog_fd },
	};
	char what[128];
	int t, ret;

	ret = bench_apply_rules(&m->dp, n_rules, false);
	if (!ret)
		ret = prev_host_rules(host, n_rules);
	for (t = 0; !ret && t < TRAFFICS; t++) {
		if (m->only && !strstr(m->only, traffic_keys[t]))
			continue;
		bench_log("micro: previous data path, %zu rules, %s", n_rules,
			  traffics[t].name);
		snprintf(what, sizeof(what), "%zu rule%s, %s", n_rules,
			 n_rules > 1 ? "s" : "", traffics[t].name);
		ret = previous_pair(m, host, t, sides, what);
	}
	return ret;
}

/* The rows of micro that need more than a rule count: the default
 * new-source budget, and the test clock (no clock read). */
static int previous_others(struct micro *m, struct prev_host *host)
{
	struct side sides[2] = {
		{ .prog_fd = host->prog_fd },
		{ .prog_fd = m->dp.prog_fd },
	};
	int ret;

	ret = bench_apply_rules(&m->dp, 1, true);
	if (!ret)
		ret = prev_host_budget(host);
	if (!ret)
		ret = previous_pair(m, host, TRAFFIC_NEW, sides, "1 rule, "
				    "always-new sources, table full, default "
				    "new-source budget");
	if (ret)
		return ret;

	sides[0].prog_fd = host->clockless_fd;
	sides[1].prog_fd = m->dp_clockless.prog_fd;
	ret = bench_apply_rules(&m->dp_clockless, 1, false);
	if (!ret)
		ret = prev_host_clockless(host, 1);
	if (!ret)
		ret = previous_pair(m, host, TRAFFIC_HOT, sides, "1 rule, no "
				    "clock read (test clock), one hot source");
	return ret;
}

/* Bytes per tracked source of both bucket maps (see micro_memory()). */
static int previous_memory(struct micro *m, struct prev_host *host)
{
	unsigned long long memlock, entries, prev_memlock, prev_entries;
	double per, prev_per;
	char name[160], value[96], ratio[32];
	int ret;

	ret = micro_map_memlock(m->dp.buckets_fd, &memlock, &entries);
	if (!ret)
		ret = micro_map_memlock(host->buckets_fd, &prev_memlock,
					&prev_entries);
	if (ret)
		return ret;
	per = (double)memlock / entries;
	prev_per = (double)prev_memlock / prev_entries;
	snprintf(name, sizeof(name), "current vs previous data path (%s), "
		 "%s bytes/source", host->commit, XRL_MAP_BUCKETS);
	snprintf(value, sizeof(value), "%.0f bytes/source (against %.0f)",
		 per, prev_per);
	snprintf(ratio, sizeof(ratio), "%.2f", per / prev_per);
	bench_row("memory", name, value, ratio, GOAL_PREVIOUS_TEXT,
		  bench_verdict(per / prev_per, GOAL_PREVIOUS));
	return 0;
}

int micro_previous(struct micro *m)
{
	static const size_t rule_counts[] = { 1, 1000, 100000 };
	struct prev_host host;
	size_t i;
	int ret;

	ret = prev_host_start(&host, m->previous);
	if (ret)
		return ret;
	for (i = 0; !ret && i < sizeof(rule_counts) / sizeof(*rule_counts); i++)
		if (!m->rules || m->rules == rule_counts[i])
			ret = previous_rules(m, &host, rule_counts[i]);
	if (!ret && !m->only && !m->rules)
		ret = previous_others(m, &host);
	if (!ret)
		ret = previous_memory(m, &host);
	prev_host_stop(&host);
	return ret;
}

/* The variant without LPM lookup reads its rule from a one-slot array:
 * the default rule of every benchmark policy. */
static int fill_elim_rule(struct bpf_object *obj)
{
	int fd = bpf_object__find_map_fd_by_name(obj, "xrl_elim_rule");
	struct xrl_rule_spec spec = {
		.action = XRL_ACTION_LIMIT,
		.pps = BENCH_PPS,
		.burst = BENCH_BURST,
	};
	struct xrl_rule rule;
	__u32 zero = 0;
	int ret;

	if (fd < 0)
		return 0;
	ret = xrl_rule_compile(&spec, &rule);
	if (!ret && bpf_map_update_elem(fd, &zero, &rule, 0))
		ret = -errno;
	return ret;
}

/*
 * Loads a variant of the limiter from an object file built from a copy of
 * bpf/ with one step removed (scripts/bench/eliminate), so that each
 * step's cost is measured the same way as the whole. The variant keeps
 * the maps of the real program, so the library applies policies to it.
 */
int micro_load_variant(const char *path, struct bpf_object **objp,
		       struct xrl_datapath *dp)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	struct bpf_object *obj;
	int ret;

	obj = bpf_object__open_file(path, NULL);
	if (!obj)
		return -errno;
	ret = bpf_object__load(obj);
	if (ret) {
		bpf_object__close(obj);
		return ret;
	}
	*objp = obj;
	memset(dp, 0, sizeof(*dp));
	dp->prog_fd = bpf_program__fd(
		bpf_object__find_program_by_name(obj, "xdp_ratelimit"));
	dp->policy_fd = bpf_object__find_map_fd_by_name(obj, XRL_MAP_POLICY);
	dp->rule_table_fd = bpf_object__find_map_fd_by_name(obj,
							     XRL_MAP_RULE_TABLE);
	dp->buckets_fd = bpf_object__find_map_fd_by_name(obj, XRL_MAP_BUCKETS);
	dp->stats_fd = bpf_object__find_map_fd_by_name(obj, XRL_MAP_STATS);
	dp->rule_stats_fd = bpf_object__find_map_fd_by_name(obj,
							     XRL_MAP_RULE_STATS);
	dp->rule_spill_fd = bpf_object__find_map_fd_by_name(obj,
							     XRL_MAP_RULE_SPILL);
	dp->table_stats_fd = bpf_object__find_map_fd_by_name(obj,
							      XRL_MAP_TABLE_STATS);
	dp->settings_fd = bpf_object__find_map_fd_by_name(obj,
							   XRL_MAP_SETTINGS);
	dp->agg_shares_fd = bpf_object__find_map_fd_by_name(obj,
							     XRL_MAP_AGG_SHARES);
	dp->agg_state_fd = bpf_object__find_map_fd_by_name(obj,
							    XRL_MAP_AGG_STATE);
	dp->agg_pool_fd = bpf_object__find_map_fd_by_name(obj,
							   XRL_MAP_AGG_POOL);
	dp->events_fd = bpf_object__find_map_fd_by_name(obj, XRL_MAP_EVENTS);
	dp->event_state_fd = bpf_object__find_map_fd_by_name(obj,
							      XRL_MAP_EVENT_STATE);
	/* -ENOENT (< 0: none) in a variant without copies. */
	dp->rule_cache_fd = bpf_object__find_map_fd_by_name(obj,
							     XRL_MAP_RULE_CACHE);
	/* The variant's own rule id mark, as a loaded data path has. */
	dp->ids_fd = xrl_id_map_create(NULL);
	if (dp->ids_fd < 0)
		return dp->ids_fd;
	if (!bpf_obj_get_info_by_fd(dp->buckets_fd, &info, &len))
		dp->btf_id = info.btf_id;
	return dp->prog_fd < 0 ? -ENOENT : fill_elim_rule(obj);
}

struct ref_bpf *micro_reference(const struct micro *m)
{
	if (m->clockless_reference)
		return m->admitting ? m->ref_admitting_frozen : m->ref_frozen;
	return m->admitting ? m->ref_admitting : m->ref;
}

/*
 * Every variant against the reference, side by side in one loop; with
 * @host, against that previous data path instead (issue 14: what each
 * of its steps costs a policy that uses none of its keys).
 */
int micro_variants(struct micro *m, size_t n_rules,
		   const struct prev_host *host)
{
	struct side sides[MAX_SIDES];
	const char *base;
	char name[256], against[80];
	int t, i, ret = 0;

	sides[0].prog_fd = bpf_program__fd(micro_reference(m)->progs.bench_ref);
	snprintf(against, sizeof(against), "reference%s%s",
		 m->admitting ? " admitting" : "",
		 m->clockless_reference ? " without a clock read" : "");
	if (host) {
		sides[0].prog_fd = m->previous_clockless ? host->clockless_fd :
							   host->prog_fd;
		snprintf(against, sizeof(against), "previous data path (%s)",
			 host->commit);
	}
	for (i = 0; !ret && i < m->n_variants; i++) {
		sides[i + 1].prog_fd = m->variant_dp[i].prog_fd;
		ret = bench_apply_rules_at(&m->variant_dp[i], n_rules,
					   m->budget, m->admitting);
	}
	for (t = 0; !ret && t < TRAFFICS; t++) {
		if (m->only && !strstr(m->only, traffic_keys[t]))
			continue;
		for (i = 0; !ret && i <= m->n_variants; i++)
			ret = micro_warm(m, t, sides[i].prog_fd);
		if (!ret)
			ret = micro_side_by_side(m, t, sides,
						 m->n_variants + 1);
		if (ret)
			break;
		for (i = 0; i < m->n_variants; i++) {
			base = strrchr(m->variant_path[i], '/');
			base = base ? base + 1 : m->variant_path[i];
			snprintf(name, sizeof(name), "limiter variant %.*s vs "
				 "%s, %zu rule%s, %s%s%s",
				 (int)strcspn(base, "."), base, against,
				 n_rules, n_rules > 1 ? "s" : "",
				 traffics[t].name, m->budget ? ", default "
				 "new-source budget" : "",
				 m->admitting ? ", every packet admitted" : "");
			micro_row_vs("elimination, ns/packet", name,
				     &sides[i + 1], &sides[0], "", 0);
		}
	}
	return ret;
}

/* The variants against the previous data path of --previous. */
int micro_variants_previous(struct micro *m, size_t n_rules)
{
	struct prev_host host;
	int ret;

	ret = prev_host_start(&host, m->previous);
	if (ret)
		return ret;
	if (m->budget)
		ret = prev_host_budget(&host);
	else if (m->previous_clockless)
		ret = prev_host_clockless(&host, n_rules);
	else
		ret = prev_host_rules(&host, n_rules);
	if (!ret)
		ret = micro_variants(m, n_rules, &host);
	prev_host_stop(&host);
	return ret;
}
