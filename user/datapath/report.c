// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "bans.h"
#include "cidr.h"
#include "datapath.h"
#include "fields.h"
#include "limit.h"
#include "mapwalk.h"
#include "match.h"
#include "pin.h"
#include "policy.h"
#include "rulemaps.h"
#include "report.h"
#include "stats.h"

/* ---- stats ---------------------------------------------------------- */

static int add_rule(const struct xrl_lpm_key *key,
		    const struct xrl_rule *value, void *ctx)
{
	struct xrl_stats_report *report = ctx;
	struct xrl_rule_report *grown, *r;

	grown = realloc(report->rules, (report->n_rules + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	report->rules = grown;
	r = &report->rules[report->n_rules++];
	memset(r, 0, sizeof(*r));
	r->prefix = *key;
	r->rule = *value;
	return 0;
}

static int by_rule_id(const void *a, const void *b)
{
	const struct xrl_rule_report *ra = a, *rb = b;

	return (ra->rule.id > rb->rule.id) - (ra->rule.id < rb->rule.id);
}

/*
 * The kernel counts no LRU evictions. Every bucket ever inserted is
 * still in the table, was deleted by userspace (counted), or was
 * evicted, so evictions = inserts - occupancy - deleted, up to what
 * changed between the reads.
 */
static int collect_table(const struct xrl_datapath *dp,
			 struct xrl_table_report *table)
{
	__u64 inserts, forgotten;
	int ret;

	ret = xrl_table_stats_read(dp, &table->counters);
	if (!ret)
		ret = xrl_table_forgotten_read(dp, &forgotten);
	if (ret)
		return ret;
	ret = xrl_datapath_settings(dp, &table->settings);
	if (ret)
		return ret;
	table->max_sources = xrl_datapath_max_sources(dp);
	table->occupancy = dp->sources_count ?
			   __atomic_load_n(dp->sources_count, __ATOMIC_RELAXED) :
			   -1;
	if (table->occupancy < 0)
		table->occupancy = xrl_map_count(dp->buckets_fd,
						 sizeof(struct xrl_bucket_key));
	if (table->occupancy < 0)
		return table->occupancy;
	inserts = table->counters.events[XRL_TABLE_INSERT];
	table->evictions = inserts > (__u64)table->occupancy + forgotten ?
			   inserts - table->occupancy - forgotten : 0;
	return 0;
}

int xrl_stats_collect(const struct xrl_datapath *dp,
		      struct xrl_stats_report *report)
{
	size_t i;
	int ret;

	memset(report, 0, sizeof(*report));
	ret = xrl_stats_read(dp, report->totals);
	if (ret)
		return ret;
	ret = collect_table(dp, &report->table);
	if (!ret)
		ret = xrl_event_stats_read(dp, &report->events);
	if (ret)
		return ret;
	ret = xrl_rules_walk(dp, add_rule, report);
	if (ret)
		goto free_report;
	qsort(report->rules, report->n_rules, sizeof(*report->rules),
	      by_rule_id);
	for (i = 0; i < report->n_rules; i++) {
		ret = xrl_rule_stats_read(dp, report->rules[i].rule.id,
					  &report->rules[i].counters);
		if (ret)
			goto free_report;
	}
	return 0;

free_report:
	xrl_stats_report_free(report);
	return ret;
}

void xrl_stats_report_free(struct xrl_stats_report *report)
{
	free(report->rules);
	report->rules = NULL;
	report->n_rules = 0;
}

/* Bytes judged between two reads, every verdict. */
static __u64 total_bytes(const struct xrl_counter after[XRL_VERDICT_COUNT],
			 const struct xrl_counter before[XRL_VERDICT_COUNT])
{
	__u64 sum = 0;
	int v;

	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		sum += after[v].bytes - before[v].bytes;
	return sum;
}

/* The width of verdict @v's column of rates: its name and "/s", or 12. */
static int rate_width(int v)
{
	int width = (int)strlen(xrl_verdict_name(v)) + 2;

	return width > 12 ? width : 12;
}

void xrl_stats_rates_print(FILE *out,
			   const struct xrl_counter before[XRL_VERDICT_COUNT],
			   const struct xrl_counter after[XRL_VERDICT_COUNT],
			   double seconds, bool header)
{
	char stamp[16], name[32];
	time_t now = time(NULL);
	struct tm tm;
	int v;

	if (header) {
		fprintf(out, "%-8s", "time");
		for (v = 0; v < XRL_VERDICT_COUNT; v++) {
			snprintf(name, sizeof(name), "%s/s",
				 xrl_verdict_name(v));
			fprintf(out, " %*s", rate_width(v), name);
		}
		fprintf(out, " %12s\n", "Mbit/s");
	}
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	fprintf(out, "%-8s", stamp);
	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		fprintf(out, " %*.0f", rate_width(v), seconds > 0 ?
			(after[v].packets - before[v].packets) / seconds : 0);
	fprintf(out, " %12.1f\n", seconds > 0 ? (double)total_bytes(after, before) *
		8 / seconds / 1e6 : 0);
}

static json_t *counter_json(const struct xrl_counter *c)
{
	return json_pack("{s:I, s:I}", "packets", (json_int_t)c->packets,
			 "bytes", (json_int_t)c->bytes);
}

static json_t *totals_json(const struct xrl_counter totals[XRL_VERDICT_COUNT])
{
	json_t *obj = json_object();
	int v;

	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		json_object_set_new(obj, xrl_verdict_name(v),
				    counter_json(&totals[v]));
	return obj;
}

/* A compiled limit as the rate and burst it admits, or null if unset. */
static json_t *limit_json(const struct xrl_limit *limit)
{
	if (!limit->interval)
		return json_null();
	return json_pack("{s:f, s:I}", "rate", xrl_limit_rate(limit), "burst",
			 (json_int_t)(limit->tolerance / limit->interval));
}

static json_t *rule_json(const struct xrl_rule_report *r)
{
	char cidr[64], match[64];
	json_t *obj;

	xrl_cidr_format(&r->prefix, cidr, sizeof(cidr));
	obj = json_pack("{s:I, s:s, s:s, s:o, s:o, s:o, s:o}",
		"id", (json_int_t)r->rule.id,
		"prefix", cidr,
		"action", xrl_action_name(r->rule.action),
		"pps", limit_json(&r->rule.limit[XRL_LIMIT_PACKETS]),
		"bytes_per_s", limit_json(&r->rule.limit[XRL_LIMIT_BYTES]),
		"passed", counter_json(&r->counters.outcome[XRL_RULE_PASSED]),
		"dropped", counter_json(&r->counters.outcome[XRL_RULE_DROPPED]));
	/* Rules of one prefix told apart by their L4 match. */
	if (obj && !xrl_match_is_plain(&r->rule.match)) {
		xrl_match_format(&r->rule.match, match, sizeof(match));
		json_object_set_new(obj, "match", json_string(match));
	}
	return obj;
}

static json_t *budget_json(const struct xrl_settings *settings)
{
	if (!settings->new_sources.interval)
		return json_null();	/* off */
	return json_pack("{s:I, s:I, s:b}",
		"pps", (json_int_t)settings->new_sources_pps,
		"burst", (json_int_t)settings->new_sources_burst,
		"default", !settings->new_sources_set);
}

static json_t *table_json(const struct xrl_table_report *table)
{
	json_t *obj = json_pack("{s:I, s:I, s:I, s:o, s:s}",
		"max_sources", (json_int_t)table->max_sources,
		"occupancy", (json_int_t)table->occupancy,
		"evictions", (json_int_t)table->evictions,
		"new_sources", budget_json(&table->settings),
		"unknown_sources",
		xrl_unknown_name(table->settings.unknown_verdict));
	int e;

	for (e = 0; obj && e < XRL_TABLE_EVENTS; e++)
		json_object_set_new(obj, xrl_table_event_name(e),
				    json_integer(table->counters.events[e]));
	return obj;
}

/* Limit events: settings (from the table's copy) and counters. */
static json_t *events_json(const struct xrl_stats_report *report)
{
	const struct xrl_settings *s = &report->table.settings;
	json_t *obj = json_pack("{s:f, s:I}",
		"quiet_period_s", s->event_quiet_ns / 1e9,
		"max_per_second", (json_int_t)s->events_per_second);
	int o;

	for (o = 0; obj && o < XRL_EVENT_OUTCOMES; o++)
		json_object_set_new(obj, xrl_event_outcome_name(o),
				    json_integer(report->events.count[o]));
	return obj;
}

json_t *xrl_stats_json(const struct xrl_stats_report *report)
{
	json_t *rules = json_array();
	size_t i;

	for (i = 0; i < report->n_rules; i++)
		json_array_append_new(rules, rule_json(&report->rules[i]));
	return json_pack("{s:o, s:o, s:o, s:o}", "counters",
			 totals_json(report->totals),
			 "table", table_json(&report->table),
			 "events", events_json(report), "rules", rules);
}

static void print_events(FILE *out, const struct xrl_stats_report *report)
{
	const struct xrl_settings *s = &report->table.settings;
	const __u64 *c = report->events.count;

	fprintf(out, "events:     at most 1 per source per %.3g s, %" PRIu64
		" per second in all; %" PRIu64 " sent, %" PRIu64
		" suppressed (cap), %" PRIu64 " lost (ring full)\n",
		s->event_quiet_ns / 1e9, (uint64_t)s->events_per_second,
		(uint64_t)c[XRL_EVENT_SENT], (uint64_t)c[XRL_EVENT_SUPPRESSED],
		(uint64_t)c[XRL_EVENT_LOST]);
}

static void print_table(FILE *out, const struct xrl_table_report *table)
{
	const struct xrl_settings *s = &table->settings;
	const __u64 *e = table->counters.events;
	char budget[64];

	if (!s->new_sources.interval)
		snprintf(budget, sizeof(budget), "off");
	else
		snprintf(budget, sizeof(budget), "%llu/s, burst %llu%s",
			 (unsigned long long)s->new_sources_pps,
			 (unsigned long long)s->new_sources_burst,
			 s->new_sources_set ? "" : " (default)");
	fprintf(out, "table:      %ld of %u sources, %" PRIu64 " inserts, "
		"%" PRIu64 " evictions, %" PRIu64 " insert failures\n",
		table->occupancy, table->max_sources,
		(uint64_t)e[XRL_TABLE_INSERT], (uint64_t)table->evictions,
		(uint64_t)e[XRL_TABLE_INSERT_FAILED]);
	fprintf(out, "new sources: budget %s; %" PRIu64 " refused, judged by "
		"unknown_sources %s: %" PRIu64 " passed, %" PRIu64 " dropped\n",
		budget, (uint64_t)e[XRL_TABLE_REFUSED],
		xrl_unknown_name(s->unknown_verdict),
		(uint64_t)e[XRL_TABLE_FALLBACK_PASS],
		(uint64_t)e[XRL_TABLE_FALLBACK_DROP]);
}

static void print_totals(FILE *out,
			 const struct xrl_counter totals[XRL_VERDICT_COUNT])
{
	int v, width = 10;

	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		if ((int)strlen(xrl_verdict_name(v)) > width)
			width = strlen(xrl_verdict_name(v));
	fprintf(out, "%-*s %14s %16s\n", width, "verdict", "packets", "bytes");
	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		fprintf(out, "%-*s %14" PRIu64 " %16" PRIu64 "\n", width,
			xrl_verdict_name(v), (uint64_t)totals[v].packets,
			(uint64_t)totals[v].bytes);
}

static void format_limit(const struct xrl_limit *limit, const char *unit,
			 char *buf, size_t len)
{
	if (!limit->interval)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.6g%s/%llu", xrl_limit_rate(limit), unit,
			 (unsigned long long)(limit->tolerance /
					      limit->interval));
}

static void print_rules(FILE *out, const struct xrl_stats_report *report)
{
	char cidr[64], match[64], shown[132], pps[48], bytes[48];
	size_t i;

	fprintf(out, "%5s %-24s %-8s %-16s %-16s %12s %12s\n", "id", "prefix",
		"action", "pps/burst", "B/s/burst", "passed", "dropped");
	for (i = 0; i < report->n_rules; i++) {
		const struct xrl_rule_report *r = &report->rules[i];

		xrl_cidr_format(&r->prefix, cidr, sizeof(cidr));
		xrl_match_format(&r->rule.match, match, sizeof(match));
		snprintf(shown, sizeof(shown), "%s%s%s", cidr,
			 *match ? " " : "", match);
		format_limit(&r->rule.limit[XRL_LIMIT_PACKETS], "", pps,
			     sizeof(pps));
		format_limit(&r->rule.limit[XRL_LIMIT_BYTES], "", bytes,
			     sizeof(bytes));
		fprintf(out, "%5u %-24s %-8s %-16s %-16s %12" PRIu64
			" %12" PRIu64 "\n", r->rule.id, shown,
			xrl_action_name(r->rule.action), pps, bytes,
			(uint64_t)r->counters.outcome[XRL_RULE_PASSED].packets,
			(uint64_t)r->counters.outcome[XRL_RULE_DROPPED].packets);
	}
}

void xrl_stats_print(FILE *out, const struct xrl_stats_report *report)
{
	print_totals(out, report->totals);
	fprintf(out, "\n");
	print_table(out, &report->table);
	print_events(out, report);
	fprintf(out, "\n");
	print_rules(out, report);
}

/* ---- status --------------------------------------------------------- */

static void map_info(int fd, const char *name, struct xrl_map_report *m)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	m->name = name;
	if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
		m->id = info.id;
		m->max_entries = info.max_entries;
	}
}

static void collect_maps(const struct xrl_datapath *dp,
			 struct xrl_status_report *report)
{
	int rules_fd = xrl_datapath_rules_fd(dp);
	int head_fd = xrl_datapath_head_fd(dp);

	map_info(dp->policy_fd, XRL_MAP_POLICY, &report->maps[0]);
	map_info(rules_fd, XRL_PIN_RULES, &report->maps[1]);
	map_info(dp->buckets_fd, XRL_MAP_BUCKETS, &report->maps[2]);
	map_info(dp->stats_fd, XRL_MAP_STATS, &report->maps[3]);
	map_info(dp->rule_stats_fd, XRL_MAP_RULE_STATS, &report->maps[4]);
	map_info(dp->settings_fd, XRL_MAP_SETTINGS, &report->maps[5]);
	map_info(dp->table_stats_fd, XRL_MAP_TABLE_STATS, &report->maps[6]);
	map_info(head_fd, XRL_PIN_HEAD, &report->maps[7]);
	map_info(dp->rule_spill_fd, XRL_MAP_RULE_SPILL, &report->maps[8]);
	if (rules_fd >= 0)
		close(rules_fd);
	if (head_fd >= 0)
		close(head_fd);
	report->max_sources = report->maps[2].max_entries;
}

struct iface_walk {
	struct xrl_status_report *report;
	const char *pin_dir;
};

static void iface_mode(struct xrl_iface_report *iface)
{
	char name[IF_NAMESIZE];
	struct xrl_xdp_state state;

	/* The link's ifindex is in the netns it was made in; trust a query
	 * only when the name there is ours and so is the program. */
	if (!iface->link.ifindex || !if_indextoname(iface->link.ifindex, name) ||
	    strcmp(name, iface->name) ||
	    xrl_xdp_query(iface->link.ifindex, &state) ||
	    state.prog_id != iface->link.prog_id)
		return;
	iface->mode = state.mode;
	iface->found = true;
}

/* In libxdp's dispatcher: found when the extension pinned is in the
 * chain of the interface of that name here. */
static void chain_mode(struct xrl_iface_report *iface)
{
	int ifindex = xrl_ifindex(iface->name);

	if (ifindex < 0)
		return;
	iface->link.ifindex = ifindex;
	if (xrl_chain_read(ifindex, &iface->chain) ||
	    !xrl_chain_find(&iface->chain, iface->link.prog_id))
		return;
	iface->mode = iface->chain.mode;
	iface->found = true;
}

static int add_iface(const char *ifname, void *ctx)
{
	struct iface_walk *walk = ctx;
	struct xrl_status_report *report = walk->report;
	struct xrl_iface_report *grown, *iface;

	grown = realloc(report->ifaces, (report->n_ifaces + 1) * sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	report->ifaces = grown;
	iface = &report->ifaces[report->n_ifaces++];
	memset(iface, 0, sizeof(*iface));
	snprintf(iface->name, sizeof(iface->name), "%s", ifname);
	iface->mode = XRL_XDP_NONE;
	if (!xrl_link_read(walk->pin_dir, ifname, &iface->link)) {
		iface_mode(iface);
		return 0;
	}
	iface->link.prog_id = xrl_chain_pin_prog_id(walk->pin_dir, ifname);
	iface->chained = iface->link.prog_id != 0;
	if (iface->chained)
		chain_mode(iface);
	return 0;
}

static int by_iface_name(const void *a, const void *b)
{
	return strcmp(((const struct xrl_iface_report *)a)->name,
		      ((const struct xrl_iface_report *)b)->name);
}

int xrl_status_collect(const struct xrl_datapath *dp,
		       struct xrl_status_report *report)
{
	struct iface_walk walk = { .report = report, .pin_dir = dp->pin_dir };
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int ret;

	memset(report, 0, sizeof(*report));
	snprintf(report->pin_dir, sizeof(report->pin_dir), "%s", dp->pin_dir);
	if (!bpf_obj_get_info_by_fd(dp->prog_fd, &info, &len)) {
		report->prog_id = info.id;
		snprintf(report->prog_name, sizeof(report->prog_name), "%s",
			 info.name);
	}
	collect_maps(dp, report);
	ret = xrl_memory_collect(dp, &report->memory);
	if (ret)
		return ret;
	/* A data path pinned without the map (none here): shown as 0 of 0. */
	ret = xrl_manual_bans_fill(dp, &report->manual_bans);
	if (ret && ret != -ENOENT)
		goto free_report;
	ret = xrl_blocklists_read(dp, report->blocklists);
	if (ret < 0)
		goto free_report;
	report->n_blocklists = (size_t)ret;
	xrl_datapath_settings(dp, &report->settings);
	ret = xrl_pin_for_each_link(dp->pin_dir, add_iface, &walk);
	if (ret)
		goto free_report;
	qsort(report->ifaces, report->n_ifaces, sizeof(*report->ifaces),
	      by_iface_name);
	ret = xrl_stats_collect(dp, &report->stats);
	if (ret)
		goto free_report;
	report->tracked_sources = report->stats.table.occupancy;
	return 0;

free_report:
	xrl_status_report_free(report);
	return ret;
}

void xrl_status_report_free(struct xrl_status_report *report)
{
	free(report->ifaces);
	report->ifaces = NULL;
	report->n_ifaces = 0;
	xrl_stats_report_free(&report->stats);
}

/* "native"..., "gone" when the interface was deleted (its link with it),
 * "unknown" when it lives in another network namespace; chained:
 * "unknown" when there is no such interface here, "unchained" when its
 * dispatcher no longer runs our program (another tool took it out). */
static const char *iface_mode_name(const struct xrl_iface_report *iface)
{
	if (iface->found)
		return xrl_xdp_mode_name(iface->mode);
	if (iface->chained)
		return iface->link.ifindex ? "unchained" : "unknown";
	return iface->link.ifindex ? "unknown" : "gone";
}

/* The chain call actions, "XDP_PASS,XDP_DROP", as an array. */
static json_t *actions_json(const char *actions)
{
	json_t *array = json_array();
	char copy[sizeof(((struct xrl_chain_prog *)0)->actions)], *tok, *save;

	snprintf(copy, sizeof(copy), "%s", actions);
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		json_array_append_new(array, json_string(tok));
	return array;
}

static json_t *chain_json(const struct xrl_iface_report *iface)
{
	json_t *progs = json_array();
	size_t i;

	for (i = 0; i < iface->chain.n; i++) {
		const struct xrl_chain_prog *p = &iface->chain.progs[i];

		json_array_append_new(progs, json_pack(
			"{s:s, s:I, s:I, s:o, s:b}", "name", p->name,
			"prog_id", (json_int_t)p->id,
			"priority", (json_int_t)p->priority,
			"chain_call_actions", actions_json(p->actions),
			"this", p->id == iface->link.prog_id));
	}
	return json_pack("{s:I, s:o}",
		"id", (json_int_t)(iface->found ? iface->chain.prog_id : 0),
		"programs", progs);
}

static json_t *iface_json(const struct xrl_iface_report *iface)
{
	const struct xrl_chain_prog *ours;
	json_t *json;

	json = json_pack("{s:s, s:I, s:s, s:s, s:I, s:I}",
		"name", iface->name,
		"ifindex", (json_int_t)iface->link.ifindex,
		"mode", iface_mode_name(iface),
		"attach", iface->chained ? "dispatcher" : "link",
		"link_id", (json_int_t)iface->link.link_id,
		"prog_id", (json_int_t)iface->link.prog_id);
	if (json && iface->chained) {
		ours = xrl_chain_find(&iface->chain, iface->link.prog_id);
		if (ours)
			json_object_set_new(json, "priority",
					    json_integer(ours->priority));
		json_object_set_new(json, "dispatcher", chain_json(iface));
	}
	return json;
}

/* The dispatcher's programs under the interface's line, in running
 * order, ours marked. */
static void print_chain(FILE *out, const struct xrl_iface_report *iface)
{
	size_t i;

	if (!iface->found)
		return;
	fprintf(out, "    libxdp's dispatcher %u runs, in order:\n",
		iface->chain.prog_id);
	for (i = 0; i < iface->chain.n; i++) {
		const struct xrl_chain_prog *p = &iface->chain.progs[i];

		fprintf(out, "      priority %-4u %-16s prog %-6u goes on at "
			"%s%s\n", p->priority, p->name, p->id, p->actions,
			p->id == iface->link.prog_id ? "  <- this one" : "");
	}
}

static json_t *maps_json(const struct xrl_status_report *report)
{
	json_t *maps = json_object();
	char path[PATH_MAX + 32];
	int i;

	for (i = 0; i < XRL_REPORT_MAPS; i++) {
		const struct xrl_map_report *m = &report->maps[i];

		snprintf(path, sizeof(path), "%s/%s", report->pin_dir, m->name);
		json_object_set_new(maps, m->name, json_pack(
			"{s:s, s:I, s:I}", "path", path,
			"id", (json_int_t)m->id,
			"max_entries", (json_int_t)m->max_entries));
	}
	return maps;
}

/* The blocklists in force: each one's fill of its capacity, and hits. */
static json_t *blocklists_json(const struct xrl_status_report *report)
{
	const struct xrl_blocklist_report *b;
	json_t *lists = json_array();
	size_t i;

	for (i = 0; i < report->n_blocklists; i++) {
		b = &report->blocklists[i];
		json_array_append_new(lists, json_pack(
			"{s:s, s:s, s:I, s:I, s:{s:I, s:I}}",
			"name", b->name,
			"action", xrl_blocklist_action_name(b->action),
			"entries", (json_int_t)b->entries,
			"capacity", (json_int_t)XRL_BLOCKLIST_ENTRIES,
			"hits", "packets", (json_int_t)b->hits.packets,
				"bytes", (json_int_t)b->hits.bytes));
	}
	return lists;
}

static void print_blocklists(FILE *out, const struct xrl_status_report *report)
{
	const struct xrl_blocklist_report *b;
	size_t i;

	fprintf(out, "blocklists:%s\n", report->n_blocklists ? "" : " none");
	for (i = 0; i < report->n_blocklists; i++) {
		b = &report->blocklists[i];
		fprintf(out, "  %-16s %-8s %llu of %u entries, %llu hits\n",
			b->name, xrl_blocklist_action_name(b->action),
			(unsigned long long)b->entries, XRL_BLOCKLIST_ENTRIES,
			(unsigned long long)b->hits.packets);
	}
}

json_t *xrl_status_json(const struct xrl_status_report *report)
{
	json_t *ifaces = json_array();
	size_t i;

	for (i = 0; i < report->n_ifaces; i++)
		json_array_append_new(ifaces, iface_json(&report->ifaces[i]));
	return json_pack("{s:s, s:{s:I, s:s}, s:o, s:o, s:I, s:I, s:I, "
			 "s:{s:I, s:I}, s:o, s:{s:I, s:I}, s:o, s:o, s:o}",
		"pin_dir", report->pin_dir,
		"program", "id", (json_int_t)report->prog_id,
			   "name", report->prog_name,
		"interfaces", ifaces,
		"maps", maps_json(report),
		"rules", (json_int_t)report->stats.n_rules,
		"tracked_sources", (json_int_t)report->tracked_sources,
		"max_sources", (json_int_t)report->max_sources,
		"manual_bans", "entries",
			       (json_int_t)report->manual_bans.entries,
			       "max_entries",
			       (json_int_t)report->manual_bans.max_entries,
		"blocklists", blocklists_json(report),
		"source_prefix", "ipv4", (json_int_t)report->settings.v4_prefix,
				 "ipv6", (json_int_t)report->settings.v6_prefix,
		"counters", totals_json(report->stats.totals),
		"table", table_json(&report->stats.table),
		"memory", xrl_memory_json(&report->memory));
}

void xrl_status_print(FILE *out, const struct xrl_status_report *report)
{
	size_t i;
	int m;

	fprintf(out, "program:    %s (id %u), pins in %s\n", report->prog_name,
		report->prog_id, report->pin_dir);
	fprintf(out, "interfaces:%s\n", report->n_ifaces ? "" : " none");
	for (i = 0; i < report->n_ifaces; i++) {
		const struct xrl_iface_report *iface = &report->ifaces[i];

		if (iface->chained) {
			fprintf(out, "  %-16s ifindex %-4u %-8s prog %u in "
				"libxdp's dispatcher\n", iface->name,
				iface->link.ifindex, iface_mode_name(iface),
				iface->link.prog_id);
			print_chain(out, iface);
			continue;
		}
		fprintf(out, "  %-16s ifindex %-4u %-8s link %u, prog %u\n",
			iface->name, iface->link.ifindex,
			iface_mode_name(iface),
			iface->link.link_id, iface->link.prog_id);
	}
	fprintf(out, "maps:\n");
	for (m = 0; m < XRL_REPORT_MAPS; m++)
		fprintf(out, "  %-16s id %-6u max %-8u %s/%s\n",
			report->maps[m].name, report->maps[m].id,
			report->maps[m].max_entries, report->pin_dir,
			report->maps[m].name);
	fprintf(out, "rules:      %zu\n", report->stats.n_rules);
	fprintf(out, "sources:    %ld tracked of %u (keys /%u IPv4, /%u IPv6)\n",
		report->tracked_sources, report->max_sources,
		report->settings.v4_prefix, report->settings.v6_prefix);
	fprintf(out, "bans:       %llu by hand in %s of %u\n",
		(unsigned long long)report->manual_bans.entries,
		XRL_MAP_MANUAL_BANS, report->manual_bans.max_entries);
	print_blocklists(out, report);
	print_table(out, &report->stats.table);
	xrl_memory_print(out, &report->memory);
	fprintf(out, "\n");
	print_totals(out, report->stats.totals);
}

int xrl_json_print(FILE *out, json_t *json, bool pretty)
{
	int ret;

	if (!json)
		return -ENOMEM;
	ret = json_dumpf(json, out, pretty ? JSON_INDENT(2) : JSON_COMPACT);
	json_decref(json);
	if (ret)
		return -EIO;
	fputc('\n', out);
	return 0;
}
