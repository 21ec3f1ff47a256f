/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mapwalk.h - visiting every entry of a hash, LRU or LPM map from
 * userspace (bucket counts for status, the daemon's top, rule listings).
 */
#ifndef XRL_MAPWALK_H
#define XRL_MAPWALK_H

#include <stddef.h>

/*
 * Calls @fn(key, value, ctx) for each entry of map @fd, whose keys are
 * @key_size bytes. @value_size is how much of each value @fn reads (at
 * most the map's value size; 0: value is NULL). Maps with batch lookups
 * (hash and LRU hash; LPM trie and array too on recent kernels) are read
 * thousands of entries per system call; the others (-EINVAL/-ENOTSUPP
 * from the batch) one key per call, plus one per value. Entries added or evicted during the walk may be missed or
 * visited; a walk that visits more than twice the map's size (the kernel
 * restarts a key-by-key walk whose current key was removed) returns
 * -EAGAIN. Per-CPU maps can be walked only with @value_size 0
 * (-EOPNOTSUPP otherwise). Stops at and returns @fn's first non-zero
 * return; else 0 or -errno (-EINVAL: @key_size or @value_size does not
 * fit the map).
 */
int xrl_map_walk(int fd, size_t key_size, size_t value_size,
		 int (*fn)(const void *key, const void *value, void *ctx),
		 void *ctx);

/*
 * The same, asking for @chunk entries per batch at first (it grows when
 * one hash bucket holds more): for tests of chunk boundaries.
 */
#define XRL_MAP_WALK_CHUNK	4096
int xrl_map_walk_chunked(int fd, size_t key_size, size_t value_size,
			 unsigned int chunk,
			 int (*fn)(const void *key, const void *value,
				   void *ctx),
			 void *ctx);

/* Number of entries in map @fd, by the same walk, or -errno. */
long xrl_map_count(int fd, size_t key_size);

#endif
