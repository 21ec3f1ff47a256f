// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The map walker: every entry of a hash, LRU hash or LPM map exactly once
 * with its value, whatever the table's size against the batch size.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "mapwalk.h"

struct wide_key {
	uint32_t id;
	uint32_t pad[3];	/* keys wider than the kernel's batch cursor */
};

struct wide_value {
	uint64_t id_times_3;
	uint64_t spare;
};

/* What a walk saw: how often each id came, and whether values matched. */
struct seen {
	unsigned int *times;
	size_t n;
	size_t visits;
	size_t wrong_values;
	size_t stop_after;	/* non-zero: stop the walk after this many */
};

static int note_entry(const void *key, const void *value, void *ctx)
{
	const struct wide_key *k = key;
	const struct wide_value *v = value;
	struct seen *seen = ctx;

	seen->visits++;
	if (k->id >= seen->n || k->pad[0] != ~k->id)
		return -EBADMSG;
	seen->times[k->id]++;
	if (!v || v->id_times_3 != 3ull * k->id || v->spare != k->id)
		seen->wrong_values++;
	if (seen->stop_after && seen->visits == seen->stop_after)
		return 42;
	return 0;
}

static int map_of(enum bpf_map_type type, size_t n, size_t max_entries)
{
	struct wide_key key = {};
	struct wide_value value;
	int fd;

	fd = bpf_map_create(type, NULL, sizeof(key), sizeof(value),
			    max_entries, NULL);
	cr_assert_geq(fd, 0, "bpf_map_create: %s", strerror(errno));
	for (uint32_t i = 0; i < n; i++) {
		key.id = i;
		key.pad[0] = ~i;
		value.id_times_3 = 3ull * i;
		value.spare = i;
		cr_assert_eq(bpf_map_update_elem(fd, &key, &value, BPF_NOEXIST),
			     0, "insert %u: %s", i, strerror(errno));
	}
	return fd;
}

static void assert_walk_sees_each_once(int fd, size_t n, unsigned int chunk)
{
	struct seen seen = { .n = n };
	int ret;

	seen.times = calloc(n + 1, sizeof(*seen.times));
	cr_assert_not_null(seen.times);
	ret = xrl_map_walk_chunked(fd, sizeof(struct wide_key),
				   sizeof(struct wide_value), chunk,
				   note_entry, &seen);
	cr_assert_eq(ret, 0, "walk of %zu entries by %u: %s", n, chunk,
		     strerror(-ret));
	cr_assert_eq(seen.visits, n, "walk of %zu entries by %u saw %zu",
		     n, chunk, seen.visits);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(seen.times[i], 1, "id %zu seen %u times", i,
			     seen.times[i]);
	cr_assert_eq(seen.wrong_values, 0);
	cr_assert_eq(xrl_map_count(fd, sizeof(struct wide_key)), (long)n);
	free(seen.times);
}

static void walk_sizes(enum bpf_map_type type)
{
	const size_t chunk = XRL_MAP_WALK_CHUNK;
	const size_t sizes[] = { 0, 1, chunk - 1, chunk, chunk + 1,
				 3 * chunk + 7 };

	for (size_t s = 0; s < sizeof(sizes) / sizeof(*sizes); s++) {
		int fd = map_of(type, sizes[s], 4 * chunk);

		assert_walk_sees_each_once(fd, sizes[s], chunk);
		close(fd);
	}
}

Test(mapwalk, a_hash_map_yields_each_entry_once_below_at_and_above_a_chunk)
{
	walk_sizes(BPF_MAP_TYPE_HASH);
}

Test(mapwalk, an_lru_hash_map_yields_each_entry_once_below_at_and_above_a_chunk)
{
	/* No LRU eviction: the inserts stay well below the table's size. */
	walk_sizes(BPF_MAP_TYPE_LRU_HASH);
}

Test(mapwalk, a_hash_bucket_bigger_than_the_chunk_grows_the_chunk)
{
	/*
	 * A batch returns whole hash buckets: with one entry asked for,
	 * any bucket holding two (certain among 200 keys in 256 buckets)
	 * is -ENOSPC until the walker asks for more.
	 */
	int fd = map_of(BPF_MAP_TYPE_HASH, 200, 200);

	assert_walk_sees_each_once(fd, 200, 1);
	close(fd);
}

Test(mapwalk, the_callbacks_first_non_zero_return_stops_the_walk)
{
	int fd = map_of(BPF_MAP_TYPE_HASH, 100, 128);
	struct seen seen = { .n = 100, .stop_after = 10 };

	seen.times = calloc(100, sizeof(*seen.times));
	cr_assert_eq(xrl_map_walk(fd, sizeof(struct wide_key),
				  sizeof(struct wide_value), note_entry, &seen),
		     42);
	cr_assert_eq(seen.visits, 10);
	free(seen.times);
	close(fd);
}

Test(mapwalk, a_key_or_value_size_that_does_not_fit_the_map_is_refused)
{
	int fd = map_of(BPF_MAP_TYPE_HASH, 3, 8);
	struct seen seen = { .n = 3 };

	cr_assert_eq(xrl_map_walk(fd, sizeof(uint32_t), 0, note_entry, &seen),
		     -EINVAL);
	cr_assert_eq(xrl_map_walk(fd, sizeof(struct wide_key),
				  sizeof(struct wide_value) + 1, note_entry,
				  &seen), -EINVAL);
	cr_assert_eq(seen.visits, 0);
	close(fd);
}

struct lpm_key {
	uint32_t prefixlen;
	uint8_t addr[4];
};

struct lpm_seen {
	unsigned int times[256];
	size_t visits;
	size_t wrong;
};

static int note_prefix(const void *key, const void *value, void *ctx)
{
	const struct lpm_key *k = key;
	const uint32_t *v = value;
	struct lpm_seen *seen = ctx;

	seen->visits++;
	seen->times[k->addr[2]]++;
	if (k->prefixlen != 24 || k->addr[0] != 198 || k->addr[1] != 18 ||
	    *v != 1000u + k->addr[2])
		seen->wrong++;
	return 0;
}

Test(mapwalk, an_lpm_trie_yields_each_prefix_once)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_NO_PREALLOC);
	struct lpm_key key = { .prefixlen = 24, .addr = { 198, 18 } };
	struct lpm_seen seen = {};
	uint32_t value;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_LPM_TRIE, NULL, sizeof(key),
			    sizeof(value), 1024, &opts);
	cr_assert_geq(fd, 0, "bpf_map_create: %s", strerror(errno));
	for (unsigned int i = 0; i < 256; i++) {
		key.addr[2] = i;
		value = 1000 + i;
		cr_assert_eq(bpf_map_update_elem(fd, &key, &value, BPF_ANY), 0);
	}
	/* A chunk of 7 divides nothing: the last one is partial. */
	cr_assert_eq(xrl_map_walk_chunked(fd, sizeof(key), sizeof(value), 7,
					  note_prefix, &seen), 0);
	cr_assert_eq(seen.visits, 256);
	for (unsigned int i = 0; i < 256; i++)
		cr_assert_eq(seen.times[i], 1, "/24 %u seen %u times", i,
			     seen.times[i]);
	cr_assert_eq(seen.wrong, 0);
	cr_assert_eq(xrl_map_count(fd, sizeof(key)), 256);
	close(fd);
}

static int note_port(const void *key, const void *value, void *ctx)
{
	const uint32_t *port = key, *ifindex = value;
	unsigned int *times = ctx;

	if (*port < 8 && *ifindex == 1)
		times[*port]++;
	return 0;
}

Test(mapwalk, a_map_without_batch_lookups_is_walked_key_by_key)
{
	/* A device map has no batch operations: lookups are one by one. */
	unsigned int times[8] = {};
	uint32_t port, loopback = 1;
	int fd;

	fd = bpf_map_create(BPF_MAP_TYPE_DEVMAP_HASH, NULL, sizeof(port),
			    sizeof(loopback), 8, NULL);
	cr_assert_geq(fd, 0, "bpf_map_create: %s", strerror(errno));
	for (port = 0; port < 8; port += 2)
		cr_assert_eq(bpf_map_update_elem(fd, &port, &loopback,
						 BPF_ANY), 0,
			     "devmap insert: %s", strerror(errno));
	cr_assert_eq(xrl_map_walk(fd, sizeof(port), sizeof(loopback),
				  note_port, times), 0);
	for (port = 0; port < 8; port++)
		cr_assert_eq(times[port], port % 2 ? 0 : 1, "port %u seen %u times",
			     port, times[port]);
	cr_assert_eq(xrl_map_count(fd, sizeof(port)), 4);
	close(fd);
}
