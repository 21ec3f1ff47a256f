// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * blocklists.c - the blocklists' tries, built, staged, swapped, read
 * back and looked up (blocklists.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "blocklists.h"
#include "compiled.h"
#include "datapath.h"
#include "stats.h"

/* The kernel's own errno for an operation a map type lacks. */
#ifndef ENOTSUPP
#define ENOTSUPP	524
#endif

/* Keys per batch: big enough that the syscalls cost nothing, small
 * enough that a refusal names where it stopped. */
#define BATCH_KEYS	65536

/* @n keys one update at a time: the fallback of a kernel whose tries
 * take no batches. */
static int fill_one_by_one(int fd, const struct xrl_lpm_key *keys, size_t n,
			   const struct xrl_blocklist_value *values)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (bpf_map_update_elem(fd, &keys[i], &values[0], BPF_ANY))
			return -errno;
	return 0;
}

/* The keys in batches of BATCH_KEYS; -EOPNOTSUPP or -EINVAL at the first
 * batch when the kernel's tries take none (then one by one). */
static int fill(int fd, const struct xrl_blocklist_entries *e)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts, .elem_flags = BPF_ANY);
	struct xrl_blocklist_value *values;
	size_t done = 0;
	__u32 count;
	int ret = 0;

	values = calloc(BATCH_KEYS, sizeof(*values));
	if (!values)
		return -ENOMEM;
	for (count = 0; count < BATCH_KEYS; count++)
		values[count].listed = 1;
	while (done < e->n) {
		count = e->n - done < BATCH_KEYS ? (__u32)(e->n - done) :
						   BATCH_KEYS;
		if (!bpf_map_update_batch(fd, &e->keys[done], values, &count,
					  &opts)) {
			done += count;
			continue;
		}
		ret = -errno;
		if (!done && (ret == -EOPNOTSUPP || ret == -ENOTSUPP ||
			      ret == -EINVAL))
			ret = fill_one_by_one(fd, e->keys, e->n, values);
		break;
	}
	free(values);
	return ret;
}

int xrl_blocklist_trie(const struct xrl_blocklist_entries *e, char *err,
		       size_t len)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	int fd, ret;

	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, "xrl_blocklist",
			    sizeof(struct xrl_lpm_key),
			    sizeof(struct xrl_blocklist_value),
			    (__u32)(e->n ? e->n : 1), &opts);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, len, "creating a trie of %zu entries: %s", e->n,
			 strerror(-ret));
		return ret;
	}
	ret = fill(fd, e);
	if (ret) {
		snprintf(err, len, "loading %zu entries: %s", e->n,
			 strerror(-ret));
		close(fd);
		return ret;
	}
	return fd;
}

int xrl_blocklist_build(const struct xrl_blocklist_spec *spec, int *fd,
			size_t *n, char *err, size_t len)
{
	struct xrl_blocklist_entries e;
	int ret;

	*fd = -1;
	ret = xrl_blocklist_load(spec->file, XRL_BLOCKLIST_ENTRIES, &e, err,
				 len);
	if (ret)
		return ret;
	*n = e.n;
	if (e.n) {
		ret = xrl_blocklist_trie(&e, err, len);
		if (ret >= 0)
			*fd = ret;
	}
	xrl_blocklist_entries_free(&e);
	return ret < 0 ? ret : 0;
}

int xrl_blocklists_build(struct xrl_policy *policy, char *err, size_t len)
{
	char why[768];
	size_t i, n;
	int ret;

	for (i = 0; i < policy->n_blocklists; i++) {
		ret = xrl_blocklist_build(&policy->blocklists[i],
					  &policy->blocklist_fds[i], &n, why,
					  sizeof(why));
		if (ret) {
			snprintf(err, len, "blocklists: %s: %s",
				 policy->blocklists[i].name, why);
			while (i--)
				if (policy->blocklist_fds[i] >= 0)
					close(policy->blocklist_fds[i]);
			return ret;
		}
	}
	policy->blocklists_built = true;
	return 0;
}

/* Slot @index of xrl_blocklists holds @fd (-1: nothing). */
static int put(const struct xrl_datapath *dp, __u32 index, int fd)
{
	if (fd >= 0)
		return bpf_map_update_elem(dp->blocklists_fd, &index, &fd, 0) ?
		       -errno : 0;
	if (bpf_map_delete_elem(dp->blocklists_fd, &index) && errno != ENOENT)
		return -errno;
	return 0;
}

/*
 * The hits of slot @index (no head names it) start from those of slot
 * @from, the same list in force (-1: from 0), so that a list's counter
 * runs on through policy changes. What the list in force counts between
 * this copy and the swap is lost: the packets of one swap's wait.
 */
static int start_hits(const struct xrl_datapath *dp, __u32 index, int from)
{
	int n_cpus = libbpf_num_possible_cpus(), ret = 0;
	struct xrl_counter *hits;
	__u32 key = (__u32)from;

	if (n_cpus < 0)
		return n_cpus;
	hits = calloc((size_t)n_cpus, sizeof(*hits));
	if (!hits)
		return -ENOMEM;
	if (from >= 0 && bpf_map_lookup_elem(dp->block_hits_fd, &key, hits))
		memset(hits, 0, (size_t)n_cpus * sizeof(*hits));
	if (bpf_map_update_elem(dp->block_hits_fd, &index, hits, 0))
		ret = -errno;
	free(hits);
	return ret;
}

/* The slot of list @i of @policy in force under the same name, or -1. */
static int same_list_in_force(const struct xrl_policy *policy, size_t i,
			      const struct xrl_policy_head *in_force,
			      int in_force_slot)
{
	if (in_force_slot < 0 || i >= in_force->settings.blocklists ||
	    strncmp(in_force->blocklist_names[i], policy->blocklists[i].name,
		    XRL_BLOCKLIST_NAME_LEN))
		return -1;
	return in_force_slot * XRL_BLOCKLISTS_MAX + (int)i;
}

/* List @i of @policy into slot @index: read fresh, or the in-force
 * one's trie (@in_force_slot, -1 for none). */
static int stage_list(const struct xrl_datapath *dp,
		      const struct xrl_policy *policy, size_t i, __u32 index,
		      const struct xrl_policy_head *in_force,
		      int in_force_slot, char *err, size_t len)
{
	const struct xrl_blocklist_spec *spec = &policy->blocklists[i];
	int from = same_list_in_force(policy, i, in_force, in_force_slot);
	char why[768];
	size_t n;
	int fd = -1, ret;

	if (policy->blocklists_read && policy->blocklists_built) {
		/* Built ahead: the policy keeps its fd (put() takes a
		 * reference of its own). */
		ret = put(dp, index, policy->blocklist_fds[i]);
		if (!ret)
			ret = start_hits(dp, index, from);
		if (!ret)
			return 0;
		fd = ret;
		goto refuse;
	}
	if (!policy->blocklists_read && in_force_slot >= 0) {
		fd = xrl_datapath_inner_fd(dp->blocklists_fd,
					   (__u32)in_force_slot *
					   XRL_BLOCKLISTS_MAX + (__u32)i);
		if (fd == -ENOENT)
			fd = -1;	/* an empty list */
		else if (fd < 0)
			goto refuse;
	} else {
		ret = xrl_blocklist_build(spec, &fd, &n, why, sizeof(why));
		if (ret) {
			snprintf(err, len, "blocklists: %s: %s", spec->name,
				 why);
			return ret;
		}
	}
	ret = put(dp, index, fd);
	if (!ret)
		ret = start_hits(dp, index, from);
	if (fd >= 0)
		close(fd);
	if (!ret)
		return 0;
	fd = ret;
refuse:
	snprintf(err, len, "blocklists: %s: staging: %s", spec->name,
		 strerror(-fd));
	return fd;
}

int xrl_blocklists_stage(const struct xrl_datapath *dp,
			 const struct xrl_policy *policy, __u32 slot,
			 char *err, size_t len)
{
	struct xrl_policy_head in_force;
	int in_force_slot = -1, ret;
	size_t i;

	if (dp->blocklists_fd < 0) {
		if (!policy->n_blocklists)
			return 0;
		snprintf(err, len, "blocklists: this data path has none "
			 "(pinned by an older version?)");
		return -EOPNOTSUPP;
	}
	if (!xrl_datapath_head(dp, &in_force))
		in_force_slot = (int)in_force.rules_slot;
	xrl_blocklists_clear(dp, slot);
	for (i = 0; i < policy->n_blocklists; i++) {
		ret = stage_list(dp, policy, i, slot * XRL_BLOCKLISTS_MAX +
				 (__u32)i, &in_force, in_force_slot, err, len);
		if (ret) {
			xrl_blocklists_clear(dp, slot);
			return ret;
		}
	}
	return 0;
}

void xrl_blocklists_clear(const struct xrl_datapath *dp, __u32 slot)
{
	__u32 i;

	if (dp->blocklists_fd < 0)
		return;
	for (i = 0; i < XRL_BLOCKLISTS_MAX; i++)
		put(dp, slot * XRL_BLOCKLISTS_MAX + i, -1);
}

int xrl_blocklist_swap(const struct xrl_datapath *dp, size_t index, int fd,
		       char *err, size_t len)
{
	struct xrl_policy_head head;
	int ret;

	ret = xrl_datapath_head(dp, &head);
	if (!ret && index >= head.settings.blocklists)
		ret = -ENOENT;
	if (!ret)
		ret = put(dp, head.rules_slot * XRL_BLOCKLISTS_MAX +
			  (__u32)index, fd);
	if (ret)
		snprintf(err, len, "swapping in the list: %s", strerror(-ret));
	return ret;
}

/* The entries of the trie in slot @index: its size, made to its list. */
static __u64 trie_entries(const struct xrl_datapath *dp, __u32 index)
{
	struct bpf_map_info info = {};
	__u32 info_len = sizeof(info);
	int fd = xrl_datapath_inner_fd(dp->blocklists_fd, index);

	if (fd < 0)
		return 0;
	if (bpf_obj_get_info_by_fd(fd, &info, &info_len))
		info.max_entries = 0;
	close(fd);
	return info.max_entries;
}

/* The lists @head counts, as many as the program looks at. */
static __u32 lists_in_force(const struct xrl_policy_head *head)
{
	return head->settings.blocklists < XRL_BLOCKLISTS_MAX ?
	       head->settings.blocklists : XRL_BLOCKLISTS_MAX;
}

int xrl_blocklists_read(const struct xrl_datapath *dp,
			struct xrl_blocklist_report *out)
{
	struct xrl_policy_head head;
	__u32 i, n, index;
	int ret;

	if (dp->blocklists_fd < 0)
		return 0;
	ret = xrl_datapath_head(dp, &head);
	if (ret)
		return ret == -ENOENT ? 0 : ret;
	n = lists_in_force(&head);
	for (i = 0; i < n; i++) {
		index = head.rules_slot * XRL_BLOCKLISTS_MAX + i;
		memset(&out[i], 0, sizeof(out[i]));
		memcpy(out[i].name, head.blocklist_names[i],
		       sizeof(out[i].name) - 1);
		out[i].action = head.settings.blocklist_action[i];
		out[i].entries = trie_entries(dp, index);
		ret = xrl_block_hits_read(dp, index, &out[i].hits);
		if (ret)
			return ret;
	}
	return (int)n;
}

/* Whether the trie @fd has an entry of at most @len bits holding @addr:
 * 1, 0, or -errno. A trie's lookup matches no entry longer than its
 * key's prefix length. */
static int trie_holds(int fd, const struct xrl_lpm_key *addr, __u32 len)
{
	struct xrl_lpm_key key = *addr;
	struct xrl_blocklist_value value;

	key.prefixlen = len;
	if (!bpf_map_lookup_elem(fd, &key, &value))
		return 1;
	return errno == ENOENT ? 0 : -errno;
}

/*
 * The trie @fd holding @addr: into @prefix its widest entry holding it,
 * the shortest length at which a lookup still finds one (a lookup finds
 * one at every length from there to 128), by halving. 1, 0 when none
 * holds it, or -errno.
 */
static int trie_prefix(int fd, const struct xrl_lpm_key *addr,
		       struct xrl_lpm_key *prefix)
{
	__u32 lo = 0, hi = 128, mid, words[4];
	int ret = trie_holds(fd, addr, hi);

	while (ret == 1 && lo < hi) {
		mid = (lo + hi) / 2;
		ret = trie_holds(fd, addr, mid);
		if (ret == 1)
			hi = mid;
		else if (!ret) {
			lo = mid + 1;
			ret = 1;
		}
	}
	if (ret != 1)
		return ret;
	memcpy(words, addr->addr, sizeof(words));
	xrl_rule_key_mask(words, XRL_FAMILY_IPV6, hi);
	memcpy(prefix->addr, words, sizeof(prefix->addr));
	prefix->prefixlen = hi;
	return 1;
}

int xrl_blocklists_holding(const struct xrl_datapath *dp,
			   const struct xrl_policy_head *head,
			   const struct xrl_lpm_key *source,
			   struct xrl_blocklist_hold *out)
{
	__u32 i, n = lists_in_force(head), held = 0;
	struct xrl_blocklist_hold *h;
	int fd, ret;

	if (dp->blocklists_fd < 0)
		return 0;
	for (i = 0; i < n; i++) {
		h = &out[held];
		fd = xrl_datapath_inner_fd(dp->blocklists_fd,
					   head->rules_slot *
					   XRL_BLOCKLISTS_MAX + i);
		if (fd == -ENOENT)
			continue;	/* an empty list */
		if (fd < 0)
			return fd;
		ret = trie_prefix(fd, source, &h->prefix);
		close(fd);
		if (ret < 0)
			return ret;
		if (!ret)
			continue;
		h->index = i;
		memset(h->name, 0, sizeof(h->name));
		memcpy(h->name, head->blocklist_names[i],
		       sizeof(h->name) - 1);
		h->action = head->settings.blocklist_action[i];
		held++;
		if (h->action == XRL_BLOCKLIST_DENY)
			break;	/* where the program stops */
	}
	return (int)held;
}
