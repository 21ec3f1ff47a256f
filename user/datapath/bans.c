// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * bans.c - the program's ban records (bpf/bans.h) as userspace counts
 * them: the bans in force, for /metrics; how full the map of bans by
 * hand is, for status and /metrics; the ban by hand that covers a
 * source, for explain.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include "bans.h"
#include "cidr.h"
#include "datapath.h"
#include "mapwalk.h"

struct active_walk {
	__u64 now_ns;
	__u64 n;
};

static int count_active(const void *key, const void *value, void *ctx)
{
	const struct xrl_ban *ban = value;
	struct active_walk *walk = ctx;

	(void)key;
	if (ban->until_ns && (__s64)(ban->until_ns - walk->now_ns) > 0)
		walk->n++;
	return 0;
}

int xrl_bans_active(const struct xrl_datapath *dp, __u64 now_ns, __u64 *n)
{
	struct active_walk walk = { .now_ns = now_ns };
	int ret;

	if (dp->bans_fd < 0)
		return -ENOENT;
	ret = xrl_map_walk(dp->bans_fd, sizeof(struct xrl_bucket_key),
			   sizeof(struct xrl_ban), count_active, &walk);
	if (!ret)
		*n = walk.n;
	return ret;
}

int xrl_manual_bans_fill(const struct xrl_datapath *dp,
			 struct xrl_manual_bans_fill *fill)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	long n;

	if (dp->manual_bans_fd < 0)
		return -ENOENT;
	if (bpf_obj_get_info_by_fd(dp->manual_bans_fd, &info, &len))
		return -errno;
	n = xrl_map_count(dp->manual_bans_fd,
			  sizeof(struct xrl_manual_ban_key));
	if (n < 0)
		return (int)n;
	fill->entries = n;
	fill->max_entries = info.max_entries;
	return 0;
}

/* The program's key of a prefix (include/xrl.h, xrl_manual_ban_key). */
void xrl_manual_ban_key(const struct xrl_lpm_key *p,
			struct xrl_manual_ban_key *k)
{
	memset(k, 0, sizeof(*k));
	if (xrl_prefix_family(p) == XRL_FAMILY_IPV4) {
		k->family = XRL_FAMILY_IPV4;
		k->prefixlen = XRL_MANUAL_BAN_HDR_BITS + p->prefixlen - 96;
		memcpy(k->addr, &p->addr[12], 4);
	} else {
		k->family = XRL_FAMILY_IPV6;
		k->prefixlen = XRL_MANUAL_BAN_HDR_BITS + p->prefixlen;
		memcpy(k->addr, p->addr, 16);
	}
}

/* Whether @ban holds at @now_ns, as the program's manual_banned() says. */
static bool manual_ban_holds(const struct xrl_manual_ban *ban, __u64 now_ns)
{
	return !ban->until_ns || (__s64)(ban->until_ns - now_ns) > 0;
}

struct manual_walk {
	__u64 now_ns;
	struct xrl_manual_ban_key source;	/* for covering_walk */
	struct xrl_manual_ban_key best;
	struct xrl_manual_ban ban;
	bool found;
	__u64 n;				/* for count_manual */
};

/* Whether @key's prefix holds @source (both the program's keys). */
static bool key_covers(const struct xrl_manual_ban_key *key,
		       const struct xrl_manual_ban_key *source)
{
	unsigned bits = key->prefixlen - XRL_MANUAL_BAN_HDR_BITS, whole;

	if (key->family != source->family || key->prefixlen >
	    source->prefixlen)
		return false;
	whole = bits / 8;
	if (memcmp(key->addr, source->addr, whole))
		return false;
	return bits % 8 == 0 || !((key->addr[whole] ^ source->addr[whole]) &
				  (0xff00 >> (bits % 8)));
}

static int covering_walk(const void *key, const void *value, void *ctx)
{
	const struct xrl_manual_ban_key *k = key;
	struct manual_walk *walk = ctx;

	if (!key_covers(k, &walk->source) ||
	    (walk->found && k->prefixlen <= walk->best.prefixlen))
		return 0;
	walk->best = *k;
	memcpy(&walk->ban, value, sizeof(walk->ban));
	walk->found = true;
	return 0;
}

int xrl_manual_ban_of(const struct xrl_datapath *dp,
		      const struct xrl_lpm_key *source, __u64 now_ns,
		      struct xrl_lpm_key *prefix, struct xrl_manual_ban *ban)
{
	struct manual_walk walk = { .now_ns = now_ns };
	unsigned bits;
	int ret;

	if (dp->manual_bans_fd < 0)
		return -ENOENT;
	xrl_manual_ban_key(source, &walk.source);
	ret = xrl_map_walk(dp->manual_bans_fd, sizeof(walk.source),
			   sizeof(walk.ban), covering_walk, &walk);
	if (ret)
		return ret;
	if (!walk.found)
		return 0;
	/* Back to the address layout of struct xrl_lpm_key. */
	memset(prefix, 0, sizeof(*prefix));
	bits = walk.best.prefixlen - XRL_MANUAL_BAN_HDR_BITS;
	if (walk.best.family == XRL_FAMILY_IPV4) {
		prefix->addr[10] = prefix->addr[11] = 0xff;
		memcpy(&prefix->addr[12], walk.best.addr, 4);
		prefix->prefixlen = 96 + bits;
	} else {
		memcpy(prefix->addr, walk.best.addr, 16);
		prefix->prefixlen = bits;
	}
	*ban = walk.ban;
	return manual_ban_holds(&walk.ban, now_ns) ? 1 : 0;
}

static int count_manual(const void *key, const void *value, void *ctx)
{
	struct manual_walk *walk = ctx;

	(void)key;
	if (manual_ban_holds(value, walk->now_ns))
		walk->n++;
	return 0;
}

int xrl_manual_bans_active(const struct xrl_datapath *dp, __u64 now_ns,
			   __u64 *n)
{
	struct manual_walk walk = { .now_ns = now_ns };
	int ret;

	if (dp->manual_bans_fd < 0)
		return -ENOENT;
	ret = xrl_map_walk(dp->manual_bans_fd,
			   sizeof(struct xrl_manual_ban_key),
			   sizeof(struct xrl_manual_ban), count_manual, &walk);
	if (!ret)
		*n = walk.n;
	return ret;
}

/* The prefix of an escalation's key, as xrl_cidr_parse() gives one. */
static void escalation_prefix(const struct xrl_escalation_key *k,
			      struct xrl_lpm_key *prefix)
{
	memset(prefix, 0, sizeof(*prefix));
	memcpy(prefix->addr, k->addr, sizeof(prefix->addr));
	prefix->prefixlen = k->prefixlen +
			    (k->family == XRL_FAMILY_IPV4 ? 96 : 0);
}

struct escalated_walk {
	__u64 now_ns;
	int (*fn)(const struct xrl_escalated_ban *ban, void *ctx);
	void *ctx;
	/* For lifting: the prefix, the map, and how many were lifted. */
	const struct xrl_lpm_key *lift;
	int fd;
	int lifted;
};

static int escalated_each(const void *key, const void *value, void *ctx)
{
	const struct xrl_escalation *e = value;
	struct escalated_walk *walk = ctx;
	struct xrl_escalated_ban ban;

	if (!e->until_ns || (__s64)(e->until_ns - walk->now_ns) <= 0)
		return 0;
	escalation_prefix(key, &ban.prefix);
	ban.rule_id = ((const struct xrl_escalation_key *)key)->rule_id;
	ban.until_ns = e->until_ns;
	ban.escalations = e->escalations;
	return walk->fn(&ban, walk->ctx);
}

int xrl_escalated_bans(const struct xrl_datapath *dp, __u64 now_ns,
		       int (*fn)(const struct xrl_escalated_ban *ban,
				 void *ctx),
		       void *ctx)
{
	struct escalated_walk walk = { .now_ns = now_ns, .fn = fn,
				       .ctx = ctx };

	if (dp->escalations_fd < 0)
		return -ENOENT;
	return xrl_map_walk(dp->escalations_fd,
			    sizeof(struct xrl_escalation_key),
			    sizeof(struct xrl_escalation), escalated_each,
			    &walk);
}

/* Ends the ban of @ban's record now, when it is the prefix lifted: its
 * length stays, so a next escalation of it is a repeat. */
static int lift_each(const struct xrl_escalated_ban *ban, void *ctx)
{
	struct escalated_walk *walk = ctx;
	struct xrl_escalation_key key = { .rule_id = ban->rule_id };
	struct xrl_escalation e;
	bool ipv4 = xrl_prefix_family(&ban->prefix) == XRL_FAMILY_IPV4;

	if (!xrl_prefix_equal(&ban->prefix, walk->lift))
		return 0;
	memcpy(key.addr, ban->prefix.addr, sizeof(key.addr));
	key.family = ipv4 ? XRL_FAMILY_IPV4 : XRL_FAMILY_IPV6;
	key.prefixlen = (__u8)(ban->prefix.prefixlen - (ipv4 ? 96 : 0));
	if (bpf_map_lookup_elem(walk->fd, &key, &e))
		return 0;	/* evicted meanwhile: lifted all the same */
	e.until_ns = walk->now_ns;
	if (bpf_map_update_elem(walk->fd, &key, &e, BPF_EXIST))
		return errno == ENOENT ? 0 : -errno;
	walk->lifted++;
	return 0;
}

int xrl_escalated_lift(const struct xrl_datapath *dp,
		       const struct xrl_lpm_key *prefix, __u64 now_ns)
{
	struct escalated_walk lift = { .now_ns = now_ns, .lift = prefix,
				       .fd = dp->escalations_fd };
	int ret;

	ret = xrl_escalated_bans(dp, now_ns, lift_each, &lift);
	return ret ? ret : lift.lifted;
}

int xrl_escalated_ban_of(const struct xrl_datapath *dp,
			 const struct xrl_rule *rule,
			 const struct xrl_bucket_key *key, __u64 now_ns,
			 struct xrl_escalated_ban *ban)
{
	struct xrl_escalation_key k = { .rule_id = rule->id };
	bool ipv4 = (key->tag & 0xff) == XRL_FAMILY_IPV4;
	unsigned bits = rule->escalate.prefix + (ipv4 ? 96 : 0), i;
	struct xrl_escalation e;

	if (!rule->escalate.after || dp->escalations_fd < 0)
		return 0;
	/* As the program's escalation_key(): the key masked to the prefix
	 * (an IPv4 one's ::ffff: words kept whole). */
	for (i = 0; i < sizeof(k.addr); i++) {
		if (i * 8 + 8 <= bits)
			k.addr[i] = key->addr[i];
		else if (i * 8 < bits)
			k.addr[i] = key->addr[i] & (0xff00 >> (bits % 8));
	}
	k.family = ipv4 ? XRL_FAMILY_IPV4 : XRL_FAMILY_IPV6;
	k.prefixlen = rule->escalate.prefix;
	if (bpf_map_lookup_elem(dp->escalations_fd, &k, &e))
		return errno == ENOENT ? 0 : -errno;
	if (!e.until_ns || (__s64)(e.until_ns - now_ns) <= 0)
		return 0;
	escalation_prefix(&k, &ban->prefix);
	ban->rule_id = rule->id;
	ban->until_ns = e.until_ns;
	ban->escalations = e.escalations;
	return 1;
}
