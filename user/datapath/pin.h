/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * pin.h - the pin directory on bpffs: found or mounted, created, locked,
 * and the data path adopted from it or loaded and pinned into it.
 *
 * Every process that changes what is pinned (the CLI, the daemon) holds
 * the directory's flock while it does, so two runs never interleave.
 */
#ifndef XRL_PIN_H
#define XRL_PIN_H

#include <stdbool.h>
#include <stddef.h>
#include "datapath.h"

struct xrl_load_opts;

/* Prefix of the link pins: <pin dir>/link_<ifname>; and of the
 * extensions in libxdp's dispatcher: <pin dir>/chain_<ifname>. */
#define XRL_LINK_PIN_PREFIX "link_"
#define XRL_CHAIN_PIN_PREFIX "chain_"

struct xrl_pin_dir {
	char path[PATH_MAX];
	int fd;			/* open and flocked; -1 when not */
};

/*
 * Whether @path is (or would be) on a bpf filesystem that outlives this
 * process: 0 when so; -ENODEV when none is mounted on /sys/fs/bpf and
 * @path lies below it (one may be mounted there); -EXDEV when the one
 * here is this mount namespace's only, or none is and this namespace is
 * not PID 1's (`ip netns exec`): pins made here would vanish and the
 * host's are out of sight; other -errno for a path that can hold none.
 * @err says why.
 */
int xrl_pin_dir_check(const char *path, char *err, size_t len);

/*
 * Makes sure @path is on a bpf filesystem (mounting bpffs on /sys/fs/bpf
 * when @path lies below it and nothing is mounted there), creates the
 * directory when @create, opens and flocks it (waiting for another holder).
 * -ENOENT when !@create and it does not exist. On error @err says why.
 */
int xrl_pin_dir_open(struct xrl_pin_dir *dir, const char *path, bool create,
		     char *err, size_t len);

/* True when what @fd has open (and locked) is still the one at @path:
 * a last detach, or an owner that ended (owner.h), may have removed it
 * while another waited for the lock. */
bool xrl_still_linked(int fd, const char *path);

/* Unlocks and closes (the directory stays). */
void xrl_pin_dir_close(struct xrl_pin_dir *dir);

/*
 * Adopts the data path pinned in @dir, or (when nothing is pinned yet)
 * loads it with @opts and pins it there. *@loaded tells which happened.
 */
int xrl_datapath_adopt_or_load(struct xrl_datapath *dp,
			       const struct xrl_pin_dir *dir,
			       const struct xrl_load_opts *opts, bool *loaded,
			       char *err, size_t len);

/* Calls @fn with each interface name that has a link or an extension
 * pinned in @dir (each an interface attached); stops at and returns
 * @fn's first non-zero return. */
int xrl_pin_for_each_link(const char *dir,
			  int (*fn)(const char *ifname, void *ctx), void *ctx);

/* How many interfaces are attached from @dir (0 when it does not exist). */
int xrl_pin_count_links(const char *dir);

/*
 * Removes every pin of @pin_dir, and the directory, when no interface is
 * attached from it (the caller holds its lock). 1 when removed, 0 when
 * something is attached or nothing is pinned, -errno with @err said.
 */
int xrl_pin_remove_if_unused(const char *pin_dir, char *err, size_t len);

/* Whether a link or an extension is pinned for @ifname in @dir. */
bool xrl_pin_has_iface(const char *dir, const char *ifname);

/* Writes "<dir>/link_<ifname>" into @path. */
void xrl_pin_link_path(const char *dir, const char *ifname, char *path,
		       size_t len);

/* Writes "<dir>/chain_<ifname>" into @path. */
void xrl_pin_chain_path(const char *dir, const char *ifname, char *path,
			size_t len);

#endif
