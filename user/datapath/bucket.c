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
#include <bpf/bpf.h>
#include "bucket.h"
#include "datapath.h"
#include "mapwalk.h"

static const __u8 v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

__u64 xrl_datapath_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static bool is_v4(const __u8 addr[16])
{
	return !memcmp(addr, v4_mapped, sizeof(v4_mapped));
}

void xrl_bucket_key_make(const struct xrl_settings *settings,
			 const __u8 addr[16], __u32 rule_id,
			 struct xrl_bucket_key *key)
{
	__u32 src[4], *out = (__u32 *)key->addr;
	int i;

	memcpy(src, addr, sizeof(src));
	key->rule_id = rule_id;
	if (is_v4(addr)) {
		out[0] = 0;
		out[1] = 0;
		out[2] = src[2];
		out[3] = src[3] & settings->v4_mask;
		return;
	}
	for (i = 0; i < 4; i++)
		out[i] = src[i] & settings->v6_mask[i];
}

unsigned xrl_bucket_key_prefixlen(const struct xrl_settings *settings,
				  const struct xrl_bucket_key *key)
{
	return is_v4(key->addr) ? 96 + settings->v4_prefix :
				  settings->v6_prefix;
}

static int settings_of(const struct xrl_datapath *dp,
		       struct xrl_settings *settings)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(dp->settings_fd, &zero, settings) ?
	       -errno : 0;
}

struct prefix_of_id {
	__u32 id;
	struct xrl_lpm_key *prefix;
	bool found;
};

static int match_id(const void *key, const void *value, void *ctx)
{
	const struct xrl_rule *rule = value;
	struct prefix_of_id *want = ctx;

	if (rule->id != want->id)
		return 0;
	memcpy(want->prefix, key, sizeof(*want->prefix));
	want->found = true;
	return 1;
}

int xrl_rule_of(const struct xrl_datapath *dp, const __u8 addr[16],
		struct xrl_rule *rule, struct xrl_lpm_key *prefix)
{
	struct xrl_lpm_key key = { .prefixlen = 128 };
	struct prefix_of_id want = { .prefix = prefix };
	int fd, ret;

	fd = xrl_datapath_rules_fd(dp);
	if (fd < 0)
		return fd;
	memcpy(key.addr, addr, sizeof(key.addr));
	/* The program's lookup: the longest prefix holding the address. */
	ret = bpf_map_lookup_elem(fd, &key, rule) ? -errno : 0;
	if (!ret) {
		want.id = rule->id;
		ret = xrl_map_walk(fd, sizeof(struct xrl_lpm_key),
				   sizeof(struct xrl_rule), match_id, &want);
		ret = ret < 0 ? ret : want.found ? 0 : -ENOENT;
	}
	close(fd);
	return ret;
}

void xrl_bucket_level(const struct xrl_limit *limit, __u64 tat_word,
		      __u64 now_ns, struct xrl_bucket_level *out)
{
	const __u64 time_mask = (1ULL << XRL_TAT_TIME_BITS) - 1;
	__s32 shift = (__s32)(tat_word >> XRL_TAT_TIME_BITS) -
		      XRL_TAT_SHIFT_BIAS;
	__u64 now, debt = 0;
	__s64 ahead;

	memset(out, 0, sizeof(*out));
	out->burst = (double)limit->tolerance / limit->interval;
	if (tat_word && shift != limit->shift)
		return;
	out->known = true;
	if (tat_word) {
		now = shift >= 0 ? now_ns << shift : now_ns >> -shift;
		ahead = (__s64)(((tat_word & time_mask) - (now & time_mask)) <<
				(64 - XRL_TAT_TIME_BITS)) >>
			(64 - XRL_TAT_TIME_BITS);
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
		   const struct xrl_lpm_key *prefix)
{
	unsigned bits = xrl_bucket_key_prefixlen(settings, key), i;

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
	const struct xrl_settings *settings;
	const struct xrl_lpm_key *prefix;
	struct xrl_bucket_key *keys;
	size_t n, cap;
};

static int collect_in_prefix(const void *key, const void *value, void *ctx)
{
	struct forget_walk *walk = ctx;
	struct xrl_bucket_key *grown;

	if (!key_in(walk->settings, key, walk->prefix))
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
		       const struct xrl_lpm_key *prefix, size_t *n_deleted)
{
	struct xrl_settings settings;
	struct forget_walk walk = { .settings = &settings, .prefix = prefix };
	size_t i;
	int ret;

	*n_deleted = 0;
	ret = settings_of(dp, &settings);
	if (ret)
		return ret;
	ret = xrl_map_walk(dp->buckets_fd, sizeof(struct xrl_bucket_key), 0,
			   collect_in_prefix, &walk);
	for (i = 0; !ret && i < walk.n; i++) {
		if (!bpf_map_delete_elem(dp->buckets_fd, &walk.keys[i]))
			(*n_deleted)++;
		else if (errno != ENOENT)	/* evicted meanwhile: fine */
			ret = -errno;
	}
	free(walk.keys);
	return ret;
}
