// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "mapwalk.h"

/* A hash bucket bigger than this is not a bucket but a bug. */
#define WALK_CHUNK_MAX	(1u << 20)

#ifndef ENOTSUPP
#define ENOTSUPP	524	/* the kernel's, leaked to userspace */
#endif

struct walk {
	int fd;
	size_t key_size;
	size_t value_size;	/* what the caller wants, 0 for none */
	size_t stride;		/* bytes per value as the kernel writes it */
	size_t limit;		/* visits allowed: every entry, restarts again */
	__u32 chunk;		/* entries per batch, grown on -ENOSPC */
	int (*fn)(const void *key, const void *value, void *ctx);
	void *ctx;
};

static bool map_is_percpu(__u32 type)
{
	return type == BPF_MAP_TYPE_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_LRU_PERCPU_HASH ||
	       type == BPF_MAP_TYPE_PERCPU_ARRAY ||
	       type == BPF_MAP_TYPE_PERCPU_CGROUP_STORAGE;
}

static int walk_init(struct walk *w, int fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);
	int cpus;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	if (w->key_size != info.key_size || w->value_size > info.value_size)
		return -EINVAL;
	w->fd = fd;
	w->limit = info.max_entries ? 2 * (size_t)info.max_entries : SIZE_MAX;
	w->stride = info.value_size;
	if (map_is_percpu(info.type)) {
		/* One value per possible CPU: only counting is supported. */
		if (w->value_size)
			return -EOPNOTSUPP;
		cpus = libbpf_num_possible_cpus();
		if (cpus < 0)
			return cpus;
		w->stride = ((info.value_size + 7) & ~7u) * cpus;
	}
	return 0;
}

/* Map types without batch lookups (before it was added for them). */
static bool batch_unsupported(int err)
{
	return err == -EINVAL || err == -ENOTSUPP || err == -EOPNOTSUPP;
}

/*
 * Reads the map in chunks of keys and values. The kernel's cursor is a
 * hash bucket index for hash maps (a walk under churn neither restarts nor
 * repeats) and the last key for the others (generic batch, which restarts
 * like get_next_key when that key was removed: hence the visit limit).
 * Returns 1 when the map has no batch lookup, before calling @fn.
 */
static int walk_batched(const struct walk *w)
{
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u32 chunk = w->chunk, got, i;
	void *keys = NULL, *values = NULL, *cursor;
	size_t visited = 0;
	bool first = true, last = false;
	int ret = 0;

	cursor = calloc(1, w->key_size < 8 ? 8 : w->key_size);
	if (!cursor)
		return -ENOMEM;
	while (!last) {
		if (!keys) {
			/* Not cleared: @fn reads only what the kernel wrote
			 * (clearing them cost more than the walk of a small
			 * map). */
			keys = malloc((size_t)chunk * w->key_size);
			values = malloc((size_t)chunk * w->stride);
			if (!keys || !values) {
				ret = -ENOMEM;
				break;
			}
		}
		got = chunk;
		if (bpf_map_lookup_batch(w->fd, first ? NULL : cursor, cursor,
					 keys, values, &got, &opts)) {
			ret = -errno;
			if (ret == -ENOSPC && chunk < WALK_CHUNK_MAX) {
				/* One hash bucket holds more than a chunk. */
				chunk *= 4;
				free(keys);
				free(values);
				keys = values = NULL;
				ret = 0;
				continue;
			}
			if (first && batch_unsupported(ret)) {
				ret = 1;
				break;
			}
			if (ret != -ENOENT)
				break;
			ret = 0;	/* ENOENT: the last chunk, still valid */
			last = true;
		}
		first = false;
		for (i = 0; i < got && !ret; i++) {
			if (visited++ == w->limit)
				ret = -EAGAIN;
			else
				ret = w->fn((char *)keys + i * w->key_size,
					    w->value_size ?
					    (char *)values + i * w->stride :
					    NULL, w->ctx);
		}
		if (ret)
			break;
	}
	free(values);
	free(keys);
	free(cursor);
	return ret;
}

/* One key per system call, and one more for each value. */
static int walk_one_by_one(const struct walk *w)
{
	void *key, *next, *value = NULL;
	void *prev = NULL;
	size_t visited = 0;
	int ret = 0;

	key = calloc(2, w->key_size);
	if (!key)
		return -ENOMEM;
	next = (char *)key + w->key_size;
	if (w->value_size && !(value = malloc(w->stride))) {
		ret = -ENOMEM;
		goto free_key;
	}
	while (!bpf_map_get_next_key(w->fd, prev, next)) {
		/* A key deleted under the walk makes the kernel start over:
		 * under heavy churn, stop rather than loop for ever. */
		if (visited++ == w->limit) {
			ret = -EAGAIN;
			goto free_value;
		}
		memcpy(key, next, w->key_size);
		prev = key;
		if (value && bpf_map_lookup_elem(w->fd, key, value)) {
			if (errno == ENOENT)
				continue;
			ret = -errno;
			goto free_value;
		}
		ret = w->fn(key, value, w->ctx);
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

int xrl_map_walk_chunked(int fd, size_t key_size, size_t value_size,
			 unsigned int chunk,
			 int (*fn)(const void *key, const void *value,
				   void *ctx),
			 void *ctx)
{
	struct walk w = {
		.key_size = key_size,
		.value_size = value_size,
		.chunk = chunk ? chunk : 1,
		.fn = fn,
		.ctx = ctx,
	};
	int ret;

	ret = walk_init(&w, fd);
	if (ret)
		return ret;
	ret = walk_batched(&w);
	if (ret == 1)
		ret = walk_one_by_one(&w);
	return ret;
}

int xrl_map_walk(int fd, size_t key_size, size_t value_size,
		 int (*fn)(const void *key, const void *value, void *ctx),
		 void *ctx)
{
	return xrl_map_walk_chunked(fd, key_size, value_size,
				    XRL_MAP_WALK_CHUNK, fn, ctx);
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
