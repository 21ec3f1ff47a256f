// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bucket.c - sources and their buckets, as the program keys and judges
 * them (bucket.h says what must stay in step with bpf/).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "bucket.h"
#include "cidr.h"
#include "datapath.h"
#include "mapwalk.h"
#include "policy.h"
#include "rulemaps.h"
#include "stats.h"

static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

static bool is_v4(const __u8 addr[16])
{
	return !memcmp(addr, v4_mapped, sizeof(v4_mapped));
}

void xrl_bucket_key_make(const struct xrl_settings *settings,
			 const __u8 addr[16], __u32 split_id,
			 struct xrl_bucket_key *key)
{
	__u32 src[4], *out = (__u32 *)key->addr;
	enum xrl_family family = is_v4(addr) ? XRL_FAMILY_IPV4 :
				 XRL_FAMILY_IPV6;
	int i;

	memcpy(src, addr, sizeof(src));
	key->tag = XRL_BUCKET_TAG(family, split_id);
	if (family == XRL_FAMILY_IPV4) {
		out[0] = 0;
		out[1] = 0;
		out[2] = src[2];
		out[3] = src[3] & settings->v4_mask;
		return;
	}
	if (!(src[0] | src[1]) && (!src[2] || src[2] == htonl(0xffff))) {
		/* ::/96 and ::ffff:0:0/96 as IPv6: at least the IPv4 key. */
		out[0] = 0;
		out[1] = 0;
		out[2] = src[2];
		out[3] = src[3] & (settings->v4_mask | settings->v6_mask[3]);
		return;
	}
	for (i = 0; i < 4; i++)
		out[i] = src[i] & settings->v6_mask[i];
}

void xrl_level_key_make(const __u8 addr[16], const struct xrl_rule *rule,
			unsigned level, struct xrl_bucket_key *key)
{
	enum xrl_family family = is_v4(addr) ? XRL_FAMILY_IPV4 :
				 XRL_FAMILY_IPV6;
	unsigned len = rule->levels.prefix[level % XRL_LEVELS_MAX], i;

	if (family == XRL_FAMILY_IPV4)
		len += 96;
	memset(key, 0, sizeof(*key));
	for (i = 0; i < len / 8; i++)
		key->addr[i] = addr[i];
	if (len % 8)
		key->addr[i] = addr[i] & (0xff << (8 - len % 8));
	key->tag = XRL_LEVEL_TAG(family, rule->id, level);
}

static enum xrl_family key_family(const struct xrl_bucket_key *key)
{
	return key->tag & ((1U << XRL_TAG_SPLIT_SHIFT) - 1);
}

unsigned xrl_bucket_key_prefixlen(const struct xrl_settings *settings,
				  const struct xrl_bucket_key *key)
{
	return key_family(key) == XRL_FAMILY_IPV4 ?
	       96 + settings->v4_prefix : settings->v6_prefix;
}

int xrl_rule_of(const struct xrl_datapath *dp,
		const struct xrl_settings *settings, const __u8 addr[16],
		const struct xrl_l4_packet *packet, struct xrl_rule *rule,
		struct xrl_lpm_key *prefix, struct xrl_classified *how)
{
	unsigned key_len = is_v4(addr) ? settings->v4_prefix :
					 settings->v6_prefix;

	return xrl_rules_classify(dp, addr, key_len, packet, rule, prefix,
				  how);
}

void xrl_bucket_level(const struct xrl_limit *limit, __u64 tat_word,
		      __u64 now_ns, struct xrl_bucket_level *out)
{
	__s32 shift = XRL_TAT_SHIFT(tat_word);
	__u64 now, debt = 0;
	__s64 ahead;

	memset(out, 0, sizeof(*out));
	out->burst = (double)limit->tolerance / limit->interval;
	if (tat_word && shift != limit->shift)
		return;
	out->known = true;
	if (tat_word) {
		now = shift >= 0 ? now_ns << shift : now_ns >> -shift;
		ahead = XRL_TAT_AHEAD(tat_word, now);
		if (ahead > 0)
			debt = (__u64)ahead < limit->tolerance ?
			       (__u64)ahead : limit->tolerance;
	}
	out->tokens = (double)(limit->tolerance - debt) / limit->interval;
	out->fill = limit->tolerance ?
		    1 - (double)debt / limit->tolerance : 1;
	out->full_in_ns = shift >= 0 ? debt >> shift : debt << -shift;
}

/* Whether @key's source lies in @prefix, or its source prefix holds it. */
static bool key_in(const struct xrl_settings *settings,
		   const struct xrl_bucket_key *key,
		   const struct xrl_lpm_key *prefix, enum xrl_family family)
{
	unsigned bits = xrl_bucket_key_prefixlen(settings, key), i;

	if (family != XRL_FAMILY_ANY && key_family(key) != family)
		return false;
	/* Families never mix: an IPv4 prefix holds no IPv6 source's key
	 * (an IPv4-mapped one judged as IPv6), nor the other way. */
	if (prefix->prefixlen &&
	    key_family(key) != xrl_prefix_family(prefix))
		return false;
	if (prefix->prefixlen < bits)
		bits = prefix->prefixlen;
	for (i = 0; i < bits / 8; i++)
		if (key->addr[i] != prefix->addr[i])
			return false;
	if (bits % 8) {
		__u8 mask = 0xff << (8 - bits % 8);

		if ((key->addr[i] ^ prefix->addr[i]) & mask)
			return false;
	}
	return true;
}

struct forget_walk {
	int table_fd;		/* the rule table in force: levels' lengths */
	const struct xrl_settings *settings;
	const struct xrl_lpm_key *prefix;
	enum xrl_family family;		/* only its keys; or any */
	struct xrl_bucket_key *keys;
	size_t n, cap;
};

/*
 * Whether the bucket of a rule's level (struct xrl_rule_levels), shared
 * by a subnet of the level's length, is forgotten with @prefix: only
 * when the whole subnet lies in it (one source's reset leaves its /24
 * as it is). A level no longer in force is forgotten with its subnet's
 * sources.
 */
static bool level_key_in(const struct forget_walk *walk,
			 const struct xrl_bucket_key *key)
{
	unsigned len;

	if (!xrl_rules_level_len(walk->table_fd, XRL_TAG_SPLIT_ID(key->tag) - 1,
				 XRL_TAG_LEVEL(key->tag) - 1, &len) &&
	    walk->prefix->prefixlen > len)
		return false;
	return key_in(walk->settings, key, walk->prefix, walk->family);
}

static int collect_in_prefix(const void *key, const void *value, void *ctx)
{
	const struct xrl_bucket_key *k = key;
	struct forget_walk *walk = ctx;
	struct xrl_bucket_key *grown;

	if (XRL_TAG_LEVEL(k->tag) ? !level_key_in(walk, k) :
				    !key_in(walk->settings, k, walk->prefix,
					    walk->family))
		return 0;
	if (walk->n == walk->cap) {
		walk->cap = walk->cap ? walk->cap * 2 : 64;
		grown = reallocarray(walk->keys, walk->cap, sizeof(*grown));
		if (!grown)
			return -ENOMEM;
		walk->keys = grown;
	}
	memcpy(&walk->keys[walk->n++], key, sizeof(struct xrl_bucket_key));
	return 0;
}

/* Collected first, deleted after: deleting during a walk restarts it. */
int xrl_buckets_forget(const struct xrl_datapath *dp,
		       const struct xrl_lpm_key *prefix, enum xrl_family family,
		       size_t *n_deleted)
{
	struct xrl_settings settings;
	struct forget_walk walk = {
		.settings = &settings, .prefix = prefix, .family = family,
	};
	size_t i;
	int ret;

	*n_deleted = 0;
	ret = xrl_datapath_settings(dp, &settings);
	if (ret)
		return ret;
	/* Opened once for every level bucket of the walk; none in force
	 * (-errno): a level's bucket goes with its subnet's sources. */
	walk.table_fd = xrl_rules_table_open(dp);
	ret = xrl_map_walk(dp->buckets_fd, sizeof(struct xrl_bucket_key), 0,
			   collect_in_prefix, &walk);
	if (walk.table_fd >= 0)
		close(walk.table_fd);
	for (i = 0; !ret && i < walk.n; i++) {
		/* Its counts go with it; a ban in force stays in the ban
		 * record (bpf/bans.h). */
		if (dp->offenders_fd >= 0)
			bpf_map_delete_elem(dp->offenders_fd, &walk.keys[i]);
		if (!bpf_map_delete_elem(dp->buckets_fd, &walk.keys[i]))
			(*n_deleted)++;
		else if (errno != ENOENT)	/* evicted meanwhile: fine */
			ret = -errno;
	}
	free(walk.keys);
	/* Forgotten on purpose: no evictions (include/xrl.h). */
	if (!ret)
		ret = xrl_table_forgotten_add(dp, *n_deleted);
	return ret;
}

struct xrl_refusal_tally *xrl_tallies_read(const struct xrl_datapath *dp,
					   int *n)
{
	struct xrl_refusal_tally *tallies;
	int cpus = libbpf_num_possible_cpus();
	__u32 zero = 0;

	if (cpus < 0) {
		errno = -cpus;
		return NULL;
	}
	tallies = calloc(cpus, sizeof(*tallies));
	if (!tallies)
		return NULL;
	*n = cpus;
	/* A data path without tallies holds none: all counts are in
	 * the records. */
	if (dp->tally_fd >= 0 &&
	    bpf_map_lookup_elem(dp->tally_fd, &zero, tallies)) {
		free(tallies);
		return NULL;
	}
	return tallies;
}

__u64 xrl_tallied(const struct xrl_refusal_tally *tallies, int n,
		  const struct xrl_bucket_key *key,
		  const struct xrl_offender *off)
{
	__u64 held = 0;
	int i;

	for (i = 0; i < n; i++)
		if (tallies[i].dropped && tallies[i].rule_id == off->rule_id &&
		    tallies[i].gen == off->gen &&
		    !memcmp(&tallies[i].key, key, sizeof(*key)))
			held += tallies[i].dropped;
	return held;
}

int xrl_offender_read(const struct xrl_datapath *dp,
		      const struct xrl_bucket_key *key,
		      struct xrl_offender *out)
{
	struct xrl_refusal_tally *tallies;
	int n;

	if (dp->offenders_fd < 0)
		return -ENOENT;
	if (bpf_map_lookup_elem(dp->offenders_fd, key, out))
		return -errno;
	tallies = xrl_tallies_read(dp, &n);
	if (!tallies)
		return -errno;
	out->dropped += xrl_tallied(tallies, n, key, out);
	free(tallies);
	return 0;
}

int xrl_offender_of(const struct xrl_datapath *dp,
		    const struct xrl_bucket_key *key,
		    const struct xrl_bucket *bucket, struct xrl_offender *out)
{
	int ret;

	if (!(bucket->rule_id & XRL_BUCKET_OFFENDER))
		return -ENOENT;
	ret = xrl_offender_read(dp, key, out);
	if (ret)
		return ret;
	if (out->rule_id != XRL_BUCKET_RULE(bucket->rule_id))
		return -ENOENT;	/* another rule's: counts for it no more */
	return 0;
}
