// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * policy_map.c - a policy as the data path holds it: applied in one swap
 * of the policy head (its settings, and the rules slot where rulemaps.c
 * built its rules), read back, compared with the maps in force.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include "aggregate.h"
#include "blocklists.h"
#include "compiled.h"
#include "datapath.h"
#include "mapwalk.h"
#include "match.h"
#include "policy.h"
#include "policy_map.h"
#include "policy_running.h"
#include "rule.h"
#include "rule_counters.h"
#include "rulemaps.h"
#include "stats.h"
#include "typed_map.h"

/*
 * A new head map holding @head, frozen: once it may be in force nothing
 * writes it in place, so a policy's settings change only with its swap
 * (and bpftool shows it frozen). The program never writes it, but the
 * map is not BPF_F_RDONLY_PROG: the program's judging subprograms are
 * global (verified once, not once per call site), and a global function
 * may only be given memory it could write.
 * Typed with the program's BTF, so that bpftool names its fields.
 */
static int create_head_map(const struct xrl_datapath *dp,
			   const struct xrl_policy_head *head)
{
	__u32 zero = 0;
	int fd = xrl_datapath_map_create(dp, &xrl_head_shape);

	if (fd >= 0 && (bpf_map_update_elem(fd, &zero, head, 0) ||
			bpf_map_freeze(fd))) {
		close(fd);
		fd = -errno;
	}
	return fd;
}

/* Re-pins @fd as @name, for bpftool; the data path does not depend on
 * it, so a failure here only loses the inspection path. */
static void pin_in_force(const struct xrl_datapath *dp, int fd,
			 const char *name)
{
	char path[PATH_MAX + 16];

	if (!dp->pin_dir[0])
		return;
	snprintf(path, sizeof(path), "%s/%s", dp->pin_dir, name);
	unlink(path);
	bpf_obj_pin(fd, path);
}

int xrl_policy_stage(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     struct xrl_staged_policy *staged, char *err, size_t len)
{
	struct xrl_policy_head head = {}, in_force;
	struct xrl_compiled compiled;
	size_t i;
	int ret;

	staged->rules_fd = staged->table_fd = staged->head_fd = -1;
	if (policy->n_rules == 0 || policy->rules[0].prefix.prefixlen != 0) {
		snprintf(err, len, "policy has no default rule");
		return -EINVAL;
	}
	/* The slot the head in force does not name: no packet reads it,
	 * since the swap of that head waited for every packet judged by
	 * the head before it (include/xrl.h). */
	if (!xrl_datapath_head(dp, &in_force))
		head.rules_slot = (in_force.rules_slot + 1) % XRL_POLICY_SLOTS;
	staged->slot = head.rules_slot;
	ret = xrl_rules_compile(dp, policy, &compiled, err, len);
	if (ret)
		return ret;
	ret = xrl_rules_stage(dp, &compiled, head.rules_slot,
			      &staged->rules_fd, &staged->table_fd, err, len);
	if (ret)
		goto unstage;
	head.settings = compiled.settings;
	head.gen = compiled.gen;
	for (i = 0; i < policy->n_blocklists && i < XRL_BLOCKLISTS_MAX; i++)
		memcpy(head.blocklist_names[i], policy->blocklists[i].name,
		       sizeof(head.blocklist_names[i]));
	/* The lists go into the slot of the head's rules: in force with
	 * it, not before. */
	ret = xrl_blocklists_stage(dp, policy, head.rules_slot, err, len);
	if (ret)
		goto unstage;
	ret = staged->head_fd = create_head_map(dp, &head);
	if (ret < 0) {
		snprintf(err, len, "creating the policy head: %s",
			 strerror(-ret));
		goto unstage;
	}
	xrl_compiled_free(&compiled);
	return 0;

unstage:
	xrl_blocklists_clear(dp, staged->slot);
	xrl_policy_unstage(staged);
	xrl_compiled_free(&compiled);
	return ret;
}

int xrl_policy_commit(struct xrl_datapath *dp,
		      const struct xrl_staged_policy *staged, char *err,
		      size_t len)
{
	__u32 zero = 0;
	int ret;

	/* The one step the data path sees. Returns once no packet is still
	 * judged by the head it replaces. */
	if (bpf_map_update_elem(dp->settings_fd, &zero, &staged->head_fd, 0)) {
		ret = -errno;
		snprintf(err, len, "swapping in the policy head: %s",
			 strerror(-ret));
		return ret;
	}
	pin_in_force(dp, staged->rules_fd, XRL_PIN_RULES);
	pin_in_force(dp, staged->table_fd, XRL_PIN_TABLE);
	pin_in_force(dp, staged->head_fd, XRL_PIN_HEAD);
	/* No packet reads the lists of the slot swapped away from. */
	xrl_blocklists_clear(dp, (staged->slot + 1) % XRL_POLICY_SLOTS);
	/* Best effort: a counter left behind is forgotten at the next
	 * swap, and no packet is counted under an id not in force. */
	xrl_rule_counters_sweep(dp);
	return 0;
}

void xrl_policy_unstage(struct xrl_staged_policy *staged)
{
	if (staged->rules_fd >= 0)
		close(staged->rules_fd);
	if (staged->table_fd >= 0)
		close(staged->table_fd);
	if (staged->head_fd >= 0)
		close(staged->head_fd);
	staged->rules_fd = staged->table_fd = staged->head_fd = -1;
}

/*
 * The one way a policy becomes the data path's. Everything that can fail
 * comes first and touches nothing a packet reads: the checks, the rules
 * map filled in the slot no head names, the new head, the shares of new
 * aggregate rules (ids not in force). Then the commit: one update swaps
 * the head, rules and settings together. Then only what cannot fail: the
 * pins for bpftool, the shares of the rules that stayed, forgetting those
 * of rules gone.
 */
int xrl_policy_apply(struct xrl_datapath *dp, const struct xrl_policy *policy,
		     char *err, size_t len)
{
	struct xrl_staged_policy staged;
	struct xrl_agg_plan plan;
	int ret;

	ret = xrl_policy_stage(dp, policy, &staged, err, len);
	if (ret)
		return ret;
	/* An aggregate rule finds its budget from its first packet on. */
	ret = xrl_agg_stage(dp, policy, &plan, err, len);
	if (ret)
		goto unstage;
	ret = xrl_policy_commit(dp, &staged, err, len);
	if (ret) {
		xrl_agg_undo(dp, &plan);
		xrl_blocklists_clear(dp, staged.slot);
	}
	else
		xrl_agg_finish(dp, policy, &plan);
	xrl_agg_plan_free(&plan);
unstage:
	if (ret)
		xrl_blocklists_clear(dp, staged.slot);
	xrl_policy_unstage(&staged);
	return ret;
}

/* Calls @fn for each rule in force until it fails. */
static int walk_rules_map(const struct xrl_datapath *dp,
			  int (*fn)(const struct xrl_lpm_key *prefix,
				    const struct xrl_rule *rule, void *ctx),
			  void *ctx)
{
	return xrl_rules_walk(dp, fn, ctx);
}

/* The rules read back, gathered for one xrl_policy_add_many(): a rule
 * added at a time checks every rule before it. */
struct read_rules {
	struct xrl_policy *policy;
	struct xrl_rule_spec *rules;
	size_t n, cap;
};

static int add_read_rule(const struct xrl_lpm_key *key,
			 const struct xrl_rule *value, void *ctx)
{
	struct read_rules *read = ctx;
	struct xrl_rule_spec rule = {
		.prefix = *key,
		.action = value->action,
		.scope = value->scope < XRL_SCOPE_COUNT ? value->scope :
							  XRL_SCOPE_SOURCE,
		.match = value->match,
		.id = value->id,
	};
	struct xrl_rule_spec *grown;

	rule.match.next = 0;
	if (key->prefixlen == 0 && xrl_match_is_plain(&rule.match)) {
		read->policy->rules[0].action = value->action;
		read->policy->rules[0].id = value->id;
		return 0;
	}
	xrl_rule_default_name(&rule, rule.name, sizeof(rule.name));
	if (read->n == read->cap) {
		read->cap = read->cap ? read->cap * 2 : 64;
		grown = reallocarray(read->rules, read->cap, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		read->rules = grown;
	}
	read->rules[read->n++] = rule;
	return 0;
}

/* The rules gathered, into the policy with the ids they hold in force. */
static int add_read_rules(struct read_rules *read)
{
	size_t first = read->policy->n_rules, i, clash;
	int ret;

	ret = xrl_policy_add_many(read->policy, read->rules, read->n, &clash);
	for (i = 0; !ret && i < read->n; i++)
		read->policy->rules[first + i].id = read->rules[i].id;
	return ret;
}

static int count_pps_rule(const struct xrl_lpm_key *prefix,
			  const struct xrl_rule *value, void *ctx)
{
	int *count = ctx;

	if ((value->action == XRL_ACTION_LIMIT ||
	     value->action == XRL_ACTION_MONITOR) &&
	    value->limit[XRL_LIMIT_PACKETS].interval)
		(*count)++;
	return 0;
}

int xrl_policy_count_pps_rules(const struct xrl_datapath *dp)
{
	int count = 0, ret;

	ret = walk_rules_map(dp, count_pps_rule, &count);
	return ret ? ret : count;
}

int xrl_policy_read_ids(const struct xrl_datapath *dp, struct xrl_policy *out)
{
	struct read_rules read = { .policy = out };
	struct xrl_settings settings;
	int ret;

	ret = xrl_policy_init(out);
	if (ret)
		return ret;
	ret = xrl_datapath_settings(dp, &settings);
	if (!ret)
		ret = walk_rules_map(dp, add_read_rule, &read);
	if (!ret)
		ret = add_read_rules(&read);
	free(read.rules);
	if (ret) {
		xrl_policy_free(out);
		return ret;
	}
	out->v4_prefix = settings.v4_prefix;
	out->v6_prefix = settings.v6_prefix;
	out->malformed = settings.malformed_verdict;
	out->vlan_overflow = settings.vlan_overflow_verdict;
	out->ipv4_mapped = settings.ipv4_mapped_verdict;
	out->unjudged_fragments = settings.unjudged_fragments_verdict;
	out->header_overflow = settings.header_overflow_verdict;
	out->unknown = settings.unknown_verdict;
	if (settings.new_sources_set) {
		out->new_pps = settings.new_sources_pps;
		out->new_burst = settings.new_sources_burst;
		out->new_sources_off = !settings.new_sources.interval;
	}
	return 0;
}

/*
 * @policy compiled to be compared with what is in force: the generations
 * and the ids are the install's, and compared apart or not at all.
 */
static int compile_to_compare(const struct xrl_datapath *dp,
			      const struct xrl_policy *policy,
			      struct xrl_compiled *out)
{
	struct xrl_compile_input in = {
		.max_sources = xrl_datapath_max_sources(dp),
		.n_cpus = xrl_datapath_cpus(),
	};
	char err[256];

	return xrl_policy_compile(policy, &in, out, err, sizeof(err));
}

/* Whether @in_force is @wanted but for what the install chose: its
 * generations, its chain and, unless @compare_id (the policy's ids are
 * those in force), its id. */
static bool same_rule(const struct xrl_rule *wanted,
		      const struct xrl_rule *in_force, bool compare_id)
{
	struct xrl_rule rule = *wanted;

	if (!compare_id)
		rule.id = in_force->id;
	rule.gen = in_force->gen;
	rule.since = in_force->since;
	rule.match.next = in_force->match.next;
	return !memcmp(&rule, in_force, sizeof(rule));
}

struct match_ctx {
	const struct xrl_policy *policy;
	const struct xrl_compiled *compiled;
	const struct xrl_rule_spec **sorted;
	size_t n_seen;
};

static int match_rule(const struct xrl_lpm_key *key,
		      const struct xrl_rule *value, void *ctx)
{
	struct match_ctx *match = ctx;
	const struct xrl_rule_spec *rule;

	rule = xrl_policy_find_sorted(match->sorted, match->policy->n_rules,
				      key, &value->match);
	if (!rule ||
	    !same_rule(&match->compiled->rules[rule - match->policy->rules],
		       value, true))
		return -ESTALE;
	match->n_seen++;
	return 0;
}

int xrl_policy_matches_map(const struct xrl_datapath *dp,
			   const struct xrl_policy *policy)
{
	struct match_ctx match = { .policy = policy };
	struct xrl_settings in_force;
	struct xrl_compiled compiled;
	int ret;

	ret = xrl_datapath_settings(dp, &in_force);
	if (ret)
		return ret;
	ret = compile_to_compare(dp, policy, &compiled);
	if (ret)
		return ret == -ENOMEM ? ret : -ESTALE;
	match.compiled = &compiled;
	if (memcmp(&in_force, &compiled.settings, sizeof(in_force))) {
		ret = -ESTALE;
		goto free_compiled;
	}
	match.sorted = xrl_policy_sorted(policy);
	if (!match.sorted) {
		ret = -ENOMEM;
		goto free_compiled;
	}
	ret = walk_rules_map(dp, match_rule, &match);
	free(match.sorted);
	if (!ret && match.n_seen != policy->n_rules)
		ret = -ESTALE;
free_compiled:
	xrl_compiled_free(&compiled);
	return ret;
}

struct diff_ctx {
	const struct xrl_datapath *dp;
	const struct xrl_policy *next;
	const struct xrl_compiled *compiled;	/* of next */
	const struct xrl_rule_spec **sorted;
	bool *seen;		/* by index in next->rules */
	xrl_rule_change_fn fn;
	void *ctx;
	struct xrl_policy_diff *diff;
};

/* Whether the levels' limits in force (their own classifier entries,
 * include/xrl.h) are those of rule @index compiled: its levels' prefixes
 * and families are in the rule's value, compared with the rest of it. */
static bool same_level_limits(const struct xrl_datapath *dp,
			      const struct xrl_compiled *compiled,
			      size_t index, const struct xrl_rule *in_force)
{
	const union xrl_classifier_value *levels;
	struct xrl_rule level;
	unsigned i, count = compiled->rules[index].levels.count;

	levels = &compiled->values[compiled->levels_at[index]];
	for (i = 0; i < count && i < XRL_LEVELS_MAX; i++)
		if (xrl_rules_level(dp, in_force->id, i, &level) ||
		    memcmp(&level.limits, &levels[i].rule.limits,
			   sizeof(level.limits)))
			return false;
	return true;
}

static int diff_rule(const struct xrl_lpm_key *key,
		     const struct xrl_rule *in_force, void *ctx)
{
	struct diff_ctx *d = ctx;
	const struct xrl_rule_spec *rule;
	size_t index;

	d->diff->in_force++;
	rule = xrl_policy_find_sorted(d->sorted, d->next->n_rules, key,
				      &in_force->match);
	if (!rule) {
		d->diff->removed++;
		d->fn(XRL_RULE_REMOVED, key, NULL, in_force, d->ctx);
		return 0;
	}
	index = rule - d->next->rules;
	d->seen[index] = true;
	if (!same_rule(&d->compiled->rules[index], in_force, false) ||
	    !same_level_limits(d->dp, d->compiled, index, in_force)) {
		d->diff->changed++;
		d->fn(XRL_RULE_CHANGED, key, rule, in_force, d->ctx);
	} else {
		d->diff->same++;
	}
	return 0;
}

static void diff_settings(const struct xrl_settings *a,
			  const struct xrl_settings *b,
			  struct xrl_policy_diff *diff)
{
	diff->keys = a->v4_prefix != b->v4_prefix ||
		     a->v6_prefix != b->v6_prefix;
	diff->malformed = a->malformed_verdict != b->malformed_verdict;
	diff->vlan_overflow =
		a->vlan_overflow_verdict != b->vlan_overflow_verdict;
	diff->ipv4_mapped = a->ipv4_mapped_verdict != b->ipv4_mapped_verdict;
	diff->unjudged_fragments = a->unjudged_fragments_verdict !=
				   b->unjudged_fragments_verdict;
	diff->header_overflow =
		a->header_overflow_verdict != b->header_overflow_verdict;
	diff->unknown = a->unknown_verdict != b->unknown_verdict;
	diff->new_sources = a->new_sources_set != b->new_sources_set ||
			    a->new_sources_pps != b->new_sources_pps ||
			    a->new_sources_burst != b->new_sources_burst ||
			    memcmp(&a->new_sources, &b->new_sources,
				   sizeof(a->new_sources));
	diff->events = memcmp(&a->events, &b->events, sizeof(a->events)) ||
		       a->event_quiet_ns != b->event_quiet_ns;
}

int xrl_policy_diff(const struct xrl_datapath *dp,
		    const struct xrl_policy *next, xrl_rule_change_fn fn,
		    void *ctx, struct xrl_policy_diff *diff)
{
	struct diff_ctx d = { .dp = dp, .next = next, .fn = fn, .ctx = ctx,
			      .diff = diff };
	struct xrl_settings in_force;
	struct xrl_compiled compiled;
	size_t i;
	int ret;

	memset(diff, 0, sizeof(*diff));
	ret = xrl_datapath_settings(dp, &in_force);
	if (ret)
		return ret;
	ret = compile_to_compare(dp, next, &compiled);
	if (ret)
		return ret == -ENOMEM ? ret : -EINVAL;
	d.compiled = &compiled;
	diff_settings(&in_force, &compiled.settings, diff);
	d.sorted = xrl_policy_sorted(next);
	d.seen = calloc(next->n_rules ? next->n_rules : 1, sizeof(*d.seen));
	if (!d.sorted || !d.seen) {
		ret = -ENOMEM;
		goto free;
	}
	ret = walk_rules_map(dp, diff_rule, &d);
	for (i = 0; !ret && i < next->n_rules; i++) {
		if (d.seen[i])
			continue;
		diff->added++;
		fn(XRL_RULE_ADDED, &next->rules[i].prefix, &next->rules[i],
		   NULL, ctx);
	}
free:
	free(d.seen);
	free(d.sorted);
	xrl_compiled_free(&compiled);
	return ret;
}

/* ---- rule ids ------------------------------------------------------- */

/* The id mark as the map holds it (one entry). */
struct id_mark_value {
	__u32 next_id;
	__u32 wrapped;
};

static int read_mark(const struct xrl_datapath *dp, struct xrl_id_mark *mark)
{
	struct id_mark_value value;
	__u32 zero = 0;

	if (bpf_map_lookup_elem(dp->ids_fd, &zero, &value))
		return -errno;
	mark->next_id = value.next_id ? value.next_id : 1;
	mark->limit = xrl_rule_id_limit(dp);
	mark->wrapped = value.wrapped;
	return 0;
}

static int write_mark(int fd, const struct xrl_id_mark *mark)
{
	struct id_mark_value value = {
		.next_id = mark->next_id,
		.wrapped = mark->wrapped,
	};
	__u32 zero = 0;

	return bpf_map_update_elem(fd, &zero, &value, 0) ? -errno : 0;
}

int xrl_id_map_create(const struct xrl_datapath *adopted)
{
	struct xrl_id_mark mark = { .next_id = 1 };
	struct xrl_policy in_force;
	size_t i;
	int fd, ret;

	if (adopted) {
		ret = xrl_policy_read_ids(adopted, &in_force);
		if (ret)
			return ret;
		for (i = 0; i < in_force.n_rules; i++)
			if (in_force.rules[i].id >= mark.next_id)
				mark.next_id = in_force.rules[i].id + 1;
		xrl_policy_free(&in_force);
		mark.wrapped = true;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, XRL_PIN_IDS, sizeof(__u32),
			    sizeof(struct id_mark_value), 1, NULL);
	if (fd < 0)
		return -errno;
	ret = write_mark(fd, &mark);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

struct scrub_ctx {
	const bool *reused; /* XRL_RULE_IDS entries */
	struct xrl_bucket_key *keys;
	size_t n, cap;
};

static int collect_bucket(const void *key, const void *value, void *ctx)
{
	const struct xrl_bucket_key *k = key;
	const struct xrl_bucket *b = value;
	__u32 split_id = XRL_TAG_SPLIT_ID(k->tag);
	__u32 id = XRL_BUCKET_RULE(b->rule_id);
	struct scrub_ctx *scrub = ctx;
	struct xrl_bucket_key *grown;

	/* Bound to the id, or keyed by it in a split subnet or a level. */
	if ((id >= XRL_RULE_IDS || !scrub->reused[id]) &&
	    (!split_id || split_id > XRL_RULE_IDS ||
	     !scrub->reused[split_id - 1]))
		return 0;
	if (scrub->n == scrub->cap) {
		scrub->cap = scrub->cap ? scrub->cap * 2 : 256;
		grown = reallocarray(scrub->keys, scrub->cap, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		scrub->keys = grown;
	}
	scrub->keys[scrub->n++] = *k;
	return 0;
}

/*
 * Wipes what an id handed out before may have left: its counters, its
 * aggregate share and state, and every bucket of it. Only after the ids
 * wrapped: a fresh id has none of these. None of the ids is in force, so
 * nothing judged changes.
 */
static int scrub_reused(const struct xrl_datapath *dp,
			const struct xrl_policy *next, const bool *fresh)
{
	struct scrub_ctx scrub = {};
	__u64 deleted = 0;
	bool *reused;
	size_t i;
	int ret = 0;

	reused = calloc(XRL_RULE_IDS, sizeof(*reused));
	if (!reused)
		return -ENOMEM;
	scrub.reused = reused;
	for (i = 0; i < next->n_rules && !ret; i++) {
		__u32 id = next->rules[i].id;

		if (!fresh[i])
			continue;
		reused[id] = true;
		/* Made afresh when the rule is staged (rulemaps.c). */
		xrl_rule_counters_remove(dp, id);
		bpf_map_delete_elem(dp->agg_shares_fd, &id);
		bpf_map_delete_elem(dp->agg_state_fd, &id);
	}
	if (!ret)
		ret = xrl_map_walk(dp->buckets_fd,
				   sizeof(struct xrl_bucket_key),
				   sizeof(struct xrl_bucket), collect_bucket,
				   &scrub);
	for (i = 0; !ret && i < scrub.n; i++) {
		/* Its offender record, if any, is the id's too. */
		if (dp->offenders_fd >= 0)
			bpf_map_delete_elem(dp->offenders_fd, &scrub.keys[i]);
		if (!bpf_map_delete_elem(dp->buckets_fd, &scrub.keys[i]))
			deleted++;
		else if (errno != ENOENT)
			ret = -errno;
	}
	/* Deleted on purpose: no evictions (include/xrl.h). */
	if (!ret)
		ret = xrl_table_forgotten_add(dp, deleted);
	free(scrub.keys);
	free(reused);
	return ret;
}

int xrl_policy_take_ids(const struct xrl_datapath *dp, struct xrl_policy *next,
			const struct xrl_policy *running, char *err, size_t len)
{
	struct xrl_policy in_force = {};
	struct xrl_id_mark mark;
	bool *fresh;
	int ret;

	fresh = calloc(next->n_rules ? next->n_rules : 1, sizeof(*fresh));
	if (!fresh)
		return -ENOMEM;
	ret = read_mark(dp, &mark);
	if (ret) {
		snprintf(err, len, "reading the rule id mark: %s",
			 strerror(-ret));
		goto free_fresh;
	}
	if (!running) {
		ret = xrl_policy_read_ids(dp, &in_force);
		if (ret) {
			snprintf(err, len, "reading the policy in force: %s",
				 strerror(-ret));
			goto free_fresh;
		}
		running = &in_force;
	}
	ret = xrl_policy_assign_ids(next, running, &mark, fresh);
	if (ret) {
		snprintf(err, len, "no free rule id: %s", strerror(-ret));
		goto free_in_force;
	}
	/* The mark first: whatever happens next, these ids are spent. */
	ret = write_mark(dp->ids_fd, &mark);
	if (!ret && mark.wrapped)
		ret = scrub_reused(dp, next, fresh);
	if (ret)
		snprintf(err, len, "handing out rule ids: %s", strerror(-ret));
free_in_force:
	if (running == &in_force)
		xrl_policy_free(&in_force);
free_fresh:
	free(fresh);
	return ret;
}
