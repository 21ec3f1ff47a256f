// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "mapwalk.h"

/* Visits allowed in one walk: every entry, and as many restarts again. */
static size_t walk_limit(int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !info.max_entries)
		return SIZE_MAX;
	return 2 * (size_t)info.max_entries;
}

int xrl_map_walk(int fd, size_t key_size, size_t value_size,
		 int (*fn)(const void *key, const void *value, void *ctx),
		 void *ctx)
{
	void *key, *next, *value = NULL;
	void *prev = NULL;
	size_t visited = 0, limit;
	int ret = 0;

	key = calloc(2, key_size);
	if (!key)
		return -ENOMEM;
	next = (char *)key + key_size;
	if (value_size && !(value = malloc(value_size))) {
		ret = -ENOMEM;
		goto free_key;
	}
	limit = walk_limit(fd);
	while (!bpf_map_get_next_key(fd, prev, next)) {
		/* A key deleted under the walk makes the kernel start over:
		 * under heavy churn, stop rather than loop for ever. */
		if (visited++ == limit) {
			ret = -EAGAIN;
			goto free_value;
		}
		memcpy(key, next, key_size);
		prev = key;
		if (value && bpf_map_lookup_elem(fd, key, value)) {
			if (errno == ENOENT)
				continue;
			ret = -errno;
			goto free_value;
		}
		ret = fn(key, value, ctx);
		if (ret)
			goto free_value;
	}
	if (errno != ENOENT)
		ret = -errno;
free_value:
	free(value);
free_key:
	free(key);
	return ret;
}

static int count_key(const void *key, const void *value, void *ctx)
{
	(*(long *)ctx)++;
	return 0;
}

long xrl_map_count(int fd, size_t key_size)
{
	long n = 0;
	int ret;

	ret = xrl_map_walk(fd, key_size, 0, count_key, &n);
	return ret ? ret : n;
}

/* Entries read per BPF_MAP_LOOKUP_BATCH call when counting. */
#define COUNT_BATCH	4096

long xrl_map_count_batched(int fd, size_t key_size, size_t value_size)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	void *keys, *values, *cursor;
	bool first = true, done = false;
	long n = 0;
	__u32 got;
	int ret = 0;

	keys = calloc(COUNT_BATCH, key_size);
	values = calloc(COUNT_BATCH, value_size);
	/* The kernel's cursor between calls: a bucket index, key-sized. */
	cursor = calloc(2, key_size < 8 ? 8 : key_size);
	if (!keys || !values || !cursor) {
		ret = -ENOMEM;
		goto free_buffers;
	}
	while (!done) {
		got = COUNT_BATCH;
		if (bpf_map_lookup_batch(fd, first ? NULL : cursor, cursor,
					 keys, values, &got, &opts)) {
			if (errno != ENOENT) {
				ret = -errno;
				break;
			}
			done = true;
		}
		first = false;
		n += got;
	}
free_buffers:
	free(cursor);
	free(values);
	free(keys);
	return ret ? ret : n;
}
