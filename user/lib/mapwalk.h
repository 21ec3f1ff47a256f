/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * mapwalk.h - visiting every entry of a hash, LRU or LPM map from
 * userspace (bucket counts for status, the daemon's top, rule listings).
 */
#ifndef XRL_MAPWALK_H
#define XRL_MAPWALK_H

#include <stddef.h>

/*
 * Calls @fn(key, value, ctx) for each entry of map @fd. With
 * @value_size 0 no value is read (value is NULL): counting is one syscall
 * per key. Entries removed during the walk (LRU evictions) are skipped;
 * as the kernel restarts a walk whose current key was removed, a walk
 * that visits more than twice the map's size returns -EAGAIN.
 * Stops at and returns @fn's first non-zero return; else 0 or -errno.
 */
int xrl_map_walk(int fd, size_t key_size, size_t value_size,
		 int (*fn)(const void *key, const void *value, void *ctx),
		 void *ctx);

/* Number of keys in map @fd, or -errno. */
long xrl_map_count(int fd, size_t key_size);

/*
 * The same for a hash or LRU map with values of @value_size, read in
 * batches of thousands per system call (BPF_MAP_LOOKUP_BATCH) rather
 * than one call per key: tens of times faster on a big table. Entries
 * added or evicted during the count may be missed or counted.
 */
long xrl_map_count_batched(int fd, size_t key_size, size_t value_size);

#endif
