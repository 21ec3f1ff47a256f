/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * slot_write.h - writing a compiled policy into a rules slot's maps (the
 * classifier and the table by id), the slot no packet reads: new maps
 * filled whole, or, for a swap that does not reshape the policy after
 * one that did not either, the slot's own maps given only what changed
 * (include/xrl.h, "How a policy is installed"; rulemaps.c decides which).
 */
#ifndef XRL_SLOT_WRITE_H
#define XRL_SLOT_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include "compiled.h"
#include "datapath.h"

/* The maps a process staged into a rules slot (-1: not known). */
struct xrl_slot_maps {
	int table_fd;
	int rules_fd;
};

void xrl_slot_maps_close(struct xrl_slot_maps *maps);

/* All @n entries (of @value_size bytes) into @fd in one batch, or one
 * by one where the kernel has no batch: 0 or -errno. */
int xrl_slot_fill(int fd, const void *keys, size_t key_size,
		  const void *values, size_t value_size, size_t n);

/* The ids of @c's rules whose values are not those installed (@by_id,
 * @n_ids of them; a fingerprint differs, or none is there), into *@out
 * (malloc'd, *@n of them). 0 or -ENOMEM. */
int xrl_slot_changed_ids(const struct xrl_installed_rule *by_id,
			 size_t n_ids, const struct xrl_compiled *c,
			 __u32 **out, size_t *n);

/* Whether the outer maps' slot @slot holds @maps (nothing else wrote
 * it since this process did). */
bool xrl_slot_holds(const struct xrl_datapath *dp, __u32 slot,
		    const struct xrl_slot_maps *maps);

/*
 * Writes into @maps, which hold the policy before the one in force,
 * what makes them hold @c: the rules the swap to the one in force wrote
 * (@before), those @c changes (@ids), and the meta, one batch per map.
 * Only for a swap that does not reshape the policy after one that did
 * not either: the same rules at the same keys, so every other entry is
 * already @c's. 0 or -errno (-ESTALE: an id not in @c): then @maps are
 * half written, for no use again.
 */
int xrl_slot_write_in_place(const struct xrl_slot_maps *maps,
			    const struct xrl_compiled *c, const __u32 *before,
			    size_t n_before, const __u32 *ids, size_t n_ids);

/* New maps for @c, filled whole: their fds in *@table_fd, *@rules_fd
 * (-1 or a map to close on failure too). 0 or -errno. */
int xrl_slot_write_new(struct xrl_datapath *dp, const struct xrl_compiled *c,
		       int *table_fd, int *rules_fd);

#endif /* XRL_SLOT_WRITE_H */
