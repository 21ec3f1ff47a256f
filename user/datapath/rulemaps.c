// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * rulemaps.c - writing a compiled policy (compiled.h) into the rules
 * slot no packet reads (slot_write.h: new maps, or only what changed
 * into the slot's own), and reading the rules in force back.
 *
 * Each install is a new generation. A rule keeps the generation its id
 * first named its prefix in ("since"), so that buckets made for an older
 * rule of the same id start afresh (include/xrl.h, struct xrl_rule). The
 * process remembers the id -> prefix map it installed last; a process
 * that did not install the rules in force reads them back once.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "cidr.h"
#include "compiled.h"
#include "datapath.h"
#include "mapwalk.h"
#include "match.h"
#include "rule_counters.h"
#include "rulemaps.h"
#include "slot_write.h"

struct xrl_rules_known {
	__u32 gen;		/* of the policy in force (its meta's) */
	__u32 rules_gen;	/* that its rules carry */
	size_t n;		/* ids below n */
	size_t n_rules;		/* of by_id, that hold a rule */
	struct xrl_installed_rule *by_id;
	/*
	 * What a swap in place needs (xrl_rules_stage()): the maps of each
	 * slot, the ids the swap to the policy in force wrote (the slot
	 * not in force holds the policy before: these are all it lacks of
	 * the one in force), and whether that swap reshaped the policy
	 * (then every rule's generation moved, and the other slot lacks
	 * everything).
	 */
	struct xrl_slot_maps slots[XRL_POLICY_SLOTS];
	__u32 *changed;
	size_t n_changed;
	bool reshaped;
	/* The ids in force before these (by id: 1), whose counters live
	 * on one swap more. */
	size_t n_before;
	__u8 *before;
	/* Those rules as installed (compile input "before"). */
	struct xrl_installed_rule *before_by_id;
	/* The ids whose counters the next sweep deletes: in force two
	 * swaps ago, in neither policy since. Enough only when the
	 * counters map holds no id but those this process knows of
	 * (swept): else the sweep reads the map whole. */
	__u32 *gone;
	size_t n_gone;
	bool swept;
};

__u32 xrl_rule_id_limit(const struct xrl_datapath *dp)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(dp->rule_spill_fd, &info, &len))
		return 0;
	return info.max_entries;
}

__u32 xrl_rules_capacity(const struct xrl_datapath *dp)
{
	return xrl_rule_id_limit(dp) / 2;
}

__u32 xrl_rule_ids_for(__u32 max_rules)
{
	return max_rules > XRL_RULE_IDS / 2 ? XRL_RULE_IDS : 2 * max_rules;
}

/* A new fd of the inner map of @outer_fd in the rules slot of the
 * policy head in force, or -errno (-ENOENT before the first policy). */
static int inner_fd(const struct xrl_datapath *dp, int outer_fd)
{
	struct xrl_policy_head head;
	int fd, ret;
	__u32 id;

	ret = xrl_datapath_head(dp, &head);
	if (ret)
		return ret;
	if (bpf_map_lookup_elem(outer_fd, &head.rules_slot, &id))
		return -errno;
	fd = bpf_map_get_fd_by_id(id);
	return fd < 0 ? -errno : fd;
}

int xrl_rules_table_open(const struct xrl_datapath *dp)
{
	return inner_fd(dp, dp->rule_table_fd);
}

int xrl_rules_level_len(int table_fd, __u32 rule_id, unsigned level,
			unsigned *len)
{
	struct xrl_rule rule;

	if (bpf_map_lookup_elem(table_fd, &rule_id, &rule))
		return -errno;
	if (level >= rule.levels.count || level >= XRL_LEVELS_MAX)
		return -ENOENT;
	*len = rule.levels.prefix[level] +
	       (rule.levels.ipv6 & (1U << level) ? 0 : 96);
	return 0;
}

int xrl_rules_level(const struct xrl_datapath *dp, __u32 rule_id,
		    unsigned level, struct xrl_rule *out)
{
	struct xrl_rule_key key = {
		.family = XRL_KEY_LEVEL, .prefixlen = level,
		.addr = { rule_id },
	};
	int fd = inner_fd(dp, dp->policy_fd), ret = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_lookup_elem(fd, &key, out))
		ret = -errno;
	close(fd);
	return ret;
}

struct walk_ctx {
	int (*fn)(const struct xrl_lpm_key *prefix, const struct xrl_rule *rule,
		  void *ctx);
	void *ctx;
	int table_fd;
};

/* A classifier entry, and the rules chained after it in the table. */
static int walk_entry(const void *key, const void *value, void *ctx)
{
	const struct xrl_rule *rule = value;
	struct walk_ctx *w = ctx;
	struct xrl_lpm_key prefix;
	struct xrl_rule next;
	__u32 id, hops;
	int ret;

	if (!xrl_prefix_of(key, &prefix))
		return 0;
	ret = w->fn(&prefix, rule, w->ctx);
	for (hops = 0; !ret && rule->match.next; hops++) {
		id = rule->match.next - 1;
		if (hops >= XRL_MATCH_CHAIN_MAX ||
		    bpf_map_lookup_elem(w->table_fd, &id, &next))
			return hops >= XRL_MATCH_CHAIN_MAX ? -ELOOP : -errno;
		rule = &next;
		ret = w->fn(&prefix, rule, w->ctx);
	}
	return ret;
}

int xrl_rules_walk(const struct xrl_datapath *dp,
		   int (*fn)(const struct xrl_lpm_key *prefix,
			     const struct xrl_rule *rule, void *ctx),
		   void *ctx)
{
	struct walk_ctx w = { .fn = fn, .ctx = ctx };
	int fd, ret;

	fd = inner_fd(dp, dp->policy_fd);
	if (fd < 0)
		return fd;
	w.table_fd = inner_fd(dp, dp->rule_table_fd);
	if (w.table_fd < 0) {
		close(fd);
		return w.table_fd;
	}
	ret = xrl_map_walk(fd, sizeof(struct xrl_rule_key),
			   sizeof(struct xrl_rule), walk_entry, &w);
	close(w.table_fd);
	close(fd);
	return ret;
}

static struct xrl_rules_known *known_new(void)
{
	struct xrl_rules_known *known = calloc(1, sizeof(*known));
	size_t i;

	for (i = 0; known && i < XRL_POLICY_SLOTS; i++)
		known->slots[i].table_fd = known->slots[i].rules_fd = -1;
	if (known)
		known->reshaped = true;
	return known;
}

void xrl_rules_forget(struct xrl_datapath *dp)
{
	size_t i;

	if (dp->known) {
		for (i = 0; i < XRL_POLICY_SLOTS; i++)
			xrl_slot_maps_close(&dp->known->slots[i]);
		free(dp->known->changed);
		free(dp->known->by_id);
		free(dp->known->before);
		free(dp->known->before_by_id);
		free(dp->known->gone);
	}
	free(dp->known);
	dp->known = NULL;
}

static int grow_known(struct xrl_rules_known *known, size_t n)
{
	struct xrl_installed_rule *grown;
	size_t cap = known->n ? known->n : 64;

	if (n <= known->n)
		return 0;
	while (cap < n)
		cap *= 2;
	grown = reallocarray(known->by_id, cap, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	memset(grown + known->n, 0, (cap - known->n) * sizeof(*grown));
	known->by_id = grown;
	known->n = cap;
	return 0;
}

static int add_known(const struct xrl_lpm_key *prefix,
		     const struct xrl_rule *rule, void *ctx)
{
	struct xrl_rules_known *known = ctx;
	int ret = grow_known(known, (size_t)rule->id + 1);

	if (ret)
		return ret;
	xrl_installed_rule_set(&known->by_id[rule->id], prefix, rule,
			       xrl_rule_fingerprint(rule));
	known->n_rules++;
	known->rules_gen = rule->gen;
	return 0;
}

/* The generation of the rules in force: 0 when none (or unreadable). */
static __u32 in_force_gen(const struct xrl_datapath *dp)
{
	struct xrl_rule_key key = { .family = XRL_KEY_META };
	union xrl_classifier_value value;
	int fd = inner_fd(dp, dp->policy_fd);
	__u32 gen = 0;

	if (fd < 0)
		return 0;
	if (!bpf_map_lookup_elem(fd, &key, &value))
		gen = value.meta.gen;
	close(fd);
	return gen;
}

/* The rules in force, read back (none before the first install). */
static int load_known(struct xrl_datapath *dp)
{
	struct xrl_rules_known *known = known_new();
	int ret;

	if (!known)
		return -ENOMEM;
	ret = xrl_rules_walk(dp, add_known, known);
	if (ret == -ENOENT)
		ret = 0;	/* no policy yet: generation 0 */
	known->gen = in_force_gen(dp);
	if (ret) {
		free(known->by_id);
		free(known);
		return ret;
	}
	dp->known = known;
	return 0;
}

/* ---- per-rule counters: an entry per rule in force ------------------ */

/* The ids of the rules this process installed last (their since is
 * set, remember()), and of those in force before them. */
static bool known_in_force(const struct xrl_rules_known *known, __u32 id)
{
	return id < known->n && known->by_id[id].since;
}

static bool known_before(const struct xrl_rules_known *known, __u32 id)
{
	return id < known->n_before && known->before[id];
}

/* A per-CPU value as the map's syscalls lay it out: 8-byte aligned. */
static size_t counters_stride(void)
{
	return (sizeof(struct xrl_rule_counters) + 7) & ~7UL;
}

/*
 * Counters for every rule of @c new to its id (its "since" is this
 * generation), made before the slot is put in force so that the program
 * finds them from the first packet: zero when the id names another rule
 * in force now; else the entry left by the same id a swap ago, if any,
 * is kept (a rule out of one policy and back in the next counts on).
 */
static int make_new_counters(const struct xrl_datapath *dp,
			     const struct xrl_compiled *c)
{
	const struct xrl_rules_known *known = dp->known;
	void *zeros;
	size_t i;
	int ret = 0;

	zeros = calloc(xrl_datapath_cpus(), counters_stride());
	if (!zeros)
		return -ENOMEM;
	for (i = 0; i < c->n_rules && !ret; i++)
		if (c->rules[i].since == c->gen)
			ret = xrl_rule_counters_make(
				dp, c->ids[i], zeros,
				!known_in_force(known, c->ids[i]));
	free(zeros);
	return ret;
}

struct stale_counters {
	const struct xrl_rules_known *known;
	__u32 *ids;
	size_t n, cap;
};

static int collect_stale(const void *key, const void *value, void *ctx)
{
	struct stale_counters *stale = ctx;
	__u32 id = *(const __u32 *)key, *grown;

	(void)value;
	if (known_in_force(stale->known, id) || known_before(stale->known, id))
		return 0;
	if (stale->n == stale->cap) {
		stale->cap = stale->cap ? stale->cap * 2 : 256;
		grown = reallocarray(stale->ids, stale->cap, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		stale->ids = grown;
	}
	stale->ids[stale->n++] = id;
	return 0;
}

/* Every counter of an id neither in force nor in force before: what
 * a process that did not install the rules, or a swap that failed, may
 * have left. */
static int sweep_all(const struct xrl_datapath *dp)
{
	struct stale_counters stale = { .known = dp->known };
	size_t i;
	int ret;

	ret = xrl_rule_counters_walk(dp, collect_stale, &stale);
	for (i = 0; !ret && i < stale.n; i++)
		ret = xrl_rule_counters_remove(dp, stale.ids[i]);
	free(stale.ids);
	return ret;
}

int xrl_rule_counters_sweep(const struct xrl_datapath *dp)
{
	struct xrl_rules_known *known = dp->known;
	size_t i;
	int ret = 0;

	if (!known)
		return 0;	/* unknown: left for the next swap */
	if (!known->swept) {
		ret = sweep_all(dp);
		known->swept = !ret;
		return ret;
	}
	/* A swap's own leftovers: as many deletes as rules went out. */
	for (i = 0; !ret && i < known->n_gone; i++)
		ret = xrl_rule_counters_remove(dp, known->gone[i]);
	known->n_gone = 0;
	if (ret)
		known->swept = false;	/* the next sweep reads it whole */
	return ret;
}

/* The ids of the rules known now, as the ones in force before; those
 * in force before them that neither keeps, as the ones gone. */
static int remember_before(struct xrl_rules_known *known,
			   const struct xrl_compiled *c)
{
	__u8 *before = calloc(known->n ? known->n : 1, 1);
	__u32 *gone = NULL;
	size_t id, n_gone = 0, i;

	if (!before)
		return -ENOMEM;
	for (id = 0; id < known->n; id++)
		before[id] = known->by_id[id].since != 0;
	for (i = 0; i < c->n_rules; i++)
		before[c->ids[i]] |= 2;	/* in the new policy */
	for (id = 0; id < known->n_before; id++)
		n_gone += known->before[id] && !before[id];
	if (n_gone + known->n_gone) {
		gone = reallocarray(known->gone, n_gone + known->n_gone,
				    sizeof(*gone));
		if (!gone) {
			free(before);
			return -ENOMEM;
		}
		known->gone = gone;
	}
	for (id = 0; id < known->n_before; id++)
		if (known->before[id] && !before[id])
			known->gone[known->n_gone++] = id;
	for (id = 0; id < known->n; id++)
		before[id] &= 1;
	free(known->before);
	known->before = before;
	known->n_before = known->n;
	return 0;
}

/* Remembers what was installed, for the next install's "since". */
static int remember(struct xrl_datapath *dp, const struct xrl_compiled *c)
{
	struct xrl_rules_known *known = dp->known;
	struct xrl_installed_rule *installed;
	size_t i;
	int ret;

	ret = grow_known(known, (size_t)c->max_id + 1);
	if (!ret)
		ret = remember_before(known, c);
	if (ret) {
		xrl_rules_forget(dp);	/* read back next time */
		return 0;
	}
	/* The rules in force until now, for the since of a rule back
	 * after a swap away (remember_before() sized "before" to n). */
	free(known->before_by_id);
	known->before_by_id = malloc(known->n * sizeof(*known->by_id));
	if (known->before_by_id)
		memcpy(known->before_by_id, known->by_id,
		       known->n * sizeof(*known->by_id));
	memset(known->by_id, 0, known->n * sizeof(*known->by_id));
	for (i = 0; i < c->n_rules; i++) {
		installed = &known->by_id[c->ids[i]];
		xrl_installed_rule_set(installed, &c->prefixes[i],
				       &c->rules[i], c->fingerprints[i]);
	}
	known->n_rules = c->n_rules;
	known->gen = c->gen;
	known->rules_gen = c->rules_gen;
	return 0;
}

/* What this process knows of the rules in force, read back when it did
 * not install them. */
static int refresh_known(struct xrl_datapath *dp, char *err, size_t len)
{
	int ret;

	/* Another process may have installed rules since: then what this
	 * one knows is stale, and its generation would be reused. */
	if (dp->known && in_force_gen(dp) != dp->known->gen)
		xrl_rules_forget(dp);
	if (dp->known)
		return 0;
	ret = load_known(dp);
	if (ret)
		snprintf(err, len, "reading the rules in force: %s",
			 strerror(-ret));
	return ret;
}

int xrl_rules_compile(struct xrl_datapath *dp, const struct xrl_policy *policy,
		      struct xrl_compiled *out, char *err, size_t len)
{
	struct xrl_compile_input in = {
		.max_sources = xrl_datapath_max_sources(dp),
		.n_cpus = xrl_datapath_cpus(),
	};
	int ret;

	ret = refresh_known(dp, err, len);
	if (ret)
		return ret;
	in.gen = dp->known->gen + 1 ? dp->known->gen + 1 : 1;
	in.in_force = dp->known->by_id;
	in.n_in_force = dp->known->n;
	in.n_rules_in_force = dp->known->n_rules;
	in.rules_gen = dp->known->rules_gen;
	in.before = dp->known->before_by_id;
	in.n_before = in.before ? dp->known->n_before : 0;
	return xrl_policy_compile(policy, &in, out, err, len);
}

/* What the next swap in place needs of this one (struct
 * xrl_rules_known): a failure only costs it its maps made anew. */
static void remember_slot(struct xrl_rules_known *known, __u32 slot,
			  int table_fd, int rules_fd, __u32 *ids, size_t n_ids,
			  bool reshaped)
{
	struct xrl_slot_maps *maps = &known->slots[slot];

	xrl_slot_maps_close(maps);
	maps->table_fd = fcntl(table_fd, F_DUPFD_CLOEXEC, 3);
	maps->rules_fd = fcntl(rules_fd, F_DUPFD_CLOEXEC, 3);
	if (maps->table_fd < 0 || maps->rules_fd < 0)
		xrl_slot_maps_close(maps);
	free(known->changed);
	known->changed = ids;
	known->n_changed = n_ids;
	known->reshaped = reshaped;
}

int xrl_rules_stage(struct xrl_datapath *dp, const struct xrl_compiled *c,
		    __u32 slot, int *rules_fd_out, int *table_fd_out, char *err,
		    size_t len)
{
	struct xrl_slot_maps *maps = &dp->known->slots[slot];
	int table_fd = -1, rules_fd = -1, ret;
	bool in_place = false;
	__u32 capacity, *ids;
	size_t n_ids;

	capacity = xrl_rules_capacity(dp);
	if (c->n_rules > capacity || c->max_id >= 2 * capacity) {
		snprintf(err, len, "%zu rules (rule id %u): the data path was "
			 "loaded for %u rules", c->n_rules, c->max_id,
			 capacity);
		return -ENOSPC;
	}
	ret = xrl_slot_changed_ids(dp->known->by_id, dp->known->n, c, &ids,
				   &n_ids);
	if (ret) {
		snprintf(err, len, "comparing the rules: %s", strerror(-ret));
		return ret;
	}
	/* The slot no packet reads: its maps, when this process wrote
	 * them and neither swap since reshaped the policy, take only what
	 * changed (the slot's old generation: the one before in force). */
	if (!c->reshaped && !dp->known->reshaped &&
	    xrl_slot_holds(dp, slot, maps)) {
		in_place = !xrl_slot_write_in_place(maps, c, dp->known->changed,
						    dp->known->n_changed,
						    ids, n_ids);
		if (in_place) {
			table_fd = fcntl(maps->table_fd, F_DUPFD_CLOEXEC, 3);
			rules_fd = fcntl(maps->rules_fd, F_DUPFD_CLOEXEC, 3);
		} else {
			xrl_slot_maps_close(maps);	/* half written */
		}
	}
	if (!in_place) {
		ret = xrl_slot_write_new(dp, c, &table_fd, &rules_fd);
		if (ret) {
			snprintf(err, len, "creating the rules maps: %s",
				 strerror(-ret));
			goto close_maps;
		}
	}
	if (table_fd < 0 || rules_fd < 0) {
		ret = -errno;
		snprintf(err, len, "the rules maps: %s", strerror(-ret));
		goto close_maps;
	}
	ret = make_new_counters(dp, c);
	if (ret) {
		snprintf(err, len, "filling the rules maps: %s", strerror(-ret));
		goto close_maps;
	}
	/* Into the slot no packet reads: nothing the data path sees. A
	 * policy staged and never put in force (a daemon killed before the
	 * swap) leaves "known" a generation ahead of the one in force,
	 * which the next install notices and reads back. */
	if (!in_place &&
	    (bpf_map_update_elem(dp->rule_table_fd, &slot, &table_fd, 0) ||
	     bpf_map_update_elem(dp->policy_fd, &slot, &rules_fd, 0))) {
		ret = -errno;
		snprintf(err, len, "writing rules slot %u: %s", slot,
			 strerror(-ret));
		goto close_maps;
	}
	ret = remember(dp, c);
	if (!ret && dp->known) {
		remember_slot(dp->known, slot, table_fd, rules_fd, ids, n_ids,
			      c->reshaped);
		ids = NULL;
	}
	if (!ret) {
		*rules_fd_out = rules_fd;
		*table_fd_out = table_fd;
		rules_fd = table_fd = -1;
	}
close_maps:
	/* Written in place and then failed (before remember(), so known
	 * is still there): those maps no longer hold what known says. */
	if (ret && in_place)
		xrl_slot_maps_close(maps);
	free(ids);
	if (table_fd >= 0)
		close(table_fd);
	if (rules_fd >= 0)
		close(rules_fd);
	return ret;
}

/* Whether the meta's bitmaps hold a /@len rule of @family. */
static bool has_length(const struct xrl_policy_meta *meta,
		       enum xrl_family family, unsigned len)
{
	if (family == XRL_FAMILY_IPV4)
		return len <= 32 && (meta->v4_lengths >> len & 1);
	return len <= 128 && (meta->v6_lengths[len / 64 % 3] >> len % 64 & 1);
}

static int lookup_rule(int fd, enum xrl_family family, unsigned len,
		       const __u32 src[4], bool split_marker,
		       struct xrl_rule *rule)
{
	struct xrl_rule_key key = {
		.family = split_marker ? XRL_KEY_SPLIT | family : family,
		.prefixlen = len,
	};

	memcpy(key.addr, src, sizeof(key.addr));
	xrl_rule_key_mask(key.addr, family, len);
	return bpf_map_lookup_elem(fd, &key, rule) ? -errno : 0;
}

static void add_l4_proto(struct xrl_classified *how, __u8 proto)
{
	unsigned i;

	for (i = 0; i < how->n_l4_protos; i++)
		if (how->l4_protos[i] == proto)
			return;
	if (how->n_l4_protos < sizeof(how->l4_protos))
		how->l4_protos[how->n_l4_protos++] = proto;
}

/*
 * The rule of @rule's chain that takes @packet, as the program's
 * l4_chain() walks it (policy order, the plain rule last): with @packet
 * NULL, the plain rule (itself when plain), what a packet no L4 rule
 * matches gets at that key. -ENOENT when none does; the protocols of the
 * L4 rules met are added to @how.
 */
static int chain_rule(int table_fd, const struct xrl_l4_packet *packet,
		      struct xrl_rule *rule, struct xrl_classified *how)
{
	__u32 hops, id;

	for (hops = 0; hops <= XRL_MATCH_CHAIN_MAX; hops++) {
		if (xrl_match_is_plain(&rule->match))
			return 0;
		add_l4_proto(how, rule->match.proto);
		if (packet && xrl_match_takes(&rule->match, packet))
			return 0;
		if (!rule->match.next)
			return -ENOENT;
		id = rule->match.next - 1;
		if (bpf_map_lookup_elem(table_fd, &id, rule))
			return -errno;
	}
	return -ELOOP;
}

/*
 * The program's classify() (bpf/classify.h) on the classifier in force,
 * for @packet (NULL: a packet no L4 rule matches): the longest length of the family
 * first, then the default rule, then the split marker of the key subnet.
 * A source whose walk met an L4 rule is split, as in the program.
 */
int xrl_rules_classify(const struct xrl_datapath *dp, const __u8 addr[16],
		       unsigned key_len, const struct xrl_l4_packet *packet,
		       struct xrl_rule *rule, struct xrl_lpm_key *prefix,
		       struct xrl_classified *how)
{
	struct xrl_lpm_key host = { .prefixlen = 128 };
	struct xrl_rule_key meta_key = { .family = XRL_KEY_META };
	union xrl_classifier_value value;
	const struct xrl_policy_meta *meta = &value.meta;
	enum xrl_family family;
	struct xrl_rule_key found;
	int fd, table_fd, ret;
	unsigned top, len;
	__u32 src[4];

	memcpy(host.addr, addr, sizeof(host.addr));
	family = xrl_prefix_family(&host);
	top = family == XRL_FAMILY_IPV4 ? 32 : 128;
	memcpy(src, addr, sizeof(src));
	memset(how, 0, sizeof(*how));
	fd = inner_fd(dp, dp->policy_fd);
	if (fd < 0)
		return fd;
	table_fd = inner_fd(dp, dp->rule_table_fd);
	if (table_fd < 0) {
		ret = table_fd;
		goto out;
	}
	if (bpf_map_lookup_elem(fd, &meta_key, &value)) {
		ret = -errno;
		goto out;
	}
	ret = -ENOENT;
	for (len = top; len > 0 && ret; len--) {
		if (!has_length(meta, family, len))
			continue;
		ret = lookup_rule(fd, family, len, src, false, rule);
		if (!ret)
			ret = chain_rule(table_fd, packet, rule, how);
		if (ret && ret != -ENOENT)
			goto out;
		if (!ret)
			break;
	}
	memset(&found, 0, sizeof(found));
	if (ret) {
		len = 0;
		if (bpf_map_lookup_elem(fd, &found, rule)) {
			ret = -errno;
			goto out;
		}
		ret = chain_rule(table_fd, packet, rule, how);
		if (ret)
			goto out;
	} else {
		found.family = family;
		found.prefixlen = len;
		memcpy(found.addr, src, sizeof(found.addr));
		xrl_rule_key_mask(found.addr, family, len);
	}
	xrl_prefix_of(&found, prefix);
	ret = 0;
	if (len > key_len || how->n_l4_protos)
		how->split = true;
	else if (meta->long_rules & (family == XRL_FAMILY_IPV4 ? 1 : 2))
		how->split = !lookup_rule(fd, family, key_len, src, true,
					  &(struct xrl_rule){ 0 });
out:
	if (table_fd >= 0)
		close(table_fd);
	close(fd);
	return ret;
}
