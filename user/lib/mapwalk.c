// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include "mapwalk.h"

int xrl_map_walk(int fd, size_t key_size, size_t value_size,
		 int (*fn)(const void *key, const void *value, void *ctx),
		 void *ctx)
{
	void *key, *next, *value = NULL;
	void *prev = NULL;
	int ret = 0;

	key = calloc(2, key_size);
	if (!key)
		return -ENOMEM;
	next = (char *)key + key_size;
	if (value_size && !(value = malloc(value_size))) {
		ret = -ENOMEM;
		goto free_key;
	}
	while (!bpf_map_get_next_key(fd, prev, next)) {
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
