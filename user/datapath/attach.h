/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * attach.h - the XDP program on interfaces. Through libxdp's dispatcher
 * where it can run (dispatcher.h), beside other XDP programs: the
 * extension pinned as <pin dir>/chain_<ifname>. Where it cannot (the
 * kernel refuses BPF_PROG_TYPE_EXT, LIBXDP_SKIP_DISPATCHER=1), alone,
 * through a bpf_link pinned as <pin dir>/link_<ifname>. Either way it
 * keeps enforcing after the process exits and is never replaced by
 * accident (a link is not overwritten by a plain netlink attach, nor
 * does it overwrite another program; the dispatcher keeps the others).
 */
#ifndef XRL_ATTACH_H
#define XRL_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xdp_mode.h"

struct xrl_datapath;

/* What is attached to an interface. */
struct xrl_xdp_state {
	__u32 prog_id;		/* 0: nothing */
	enum xrl_xdp_mode mode;
	char prog_name[16];	/* BPF_OBJ_NAME_LEN */
};

/* The ifindex of @ifname, or -ENODEV. */
int xrl_ifindex(const char *ifname);

/* Queries the XDP program on @ifindex (in this network namespace). */
int xrl_xdp_query(int ifindex, struct xrl_xdp_state *state);

/*
 * Whether @ifname can take the data path's program: 0 when it has no XDP
 * program or libxdp's dispatcher with room, -EALREADY when it has ours,
 * -EEXIST (@err naming the program) when it has another, -ENODEV when
 * there is no such interface. @dp NULL: none is loaded yet (so nothing
 * there is ours), which can be told before loading one.
 */
int xrl_attach_check(const struct xrl_datapath *dp, const char *ifname,
		     char *err, size_t len);

/*
 * Attaches the data path's program to @ifname in @mode: into libxdp's
 * dispatcher at @priority (dispatcher.h), its extension pinned in
 * dp->pin_dir; where the dispatcher cannot run, alone through a pinned
 * link, result->fallback saying why. Refuses (-EEXIST, @err naming it
 * and how to go on) a program that is not libxdp's dispatcher, and
 * another limiter's; -EALREADY when ours is there already.
 */
int xrl_attach(const struct xrl_datapath *dp, const char *ifname,
	       enum xrl_xdp_mode mode, unsigned priority,
	       struct xrl_attach_result *result, char *err, size_t len);

/*
 * Detaches what is pinned for @ifname in @pin_dir (its link, or its
 * extension from the dispatcher, leaving the other programs running)
 * and removes the pin. -ENOENT (with @err) when nothing is pinned.
 */
int xrl_detach(const char *pin_dir, const char *ifname, char *err, size_t len);

/* Program and interface of a pinned link. */
struct xrl_link_state {
	__u32 link_id;
	__u32 prog_id;
	__u32 ifindex;		/* 0: the interface is gone */
};

int xrl_link_read(const char *pin_dir, const char *ifname,
		  struct xrl_link_state *state);

/* The id of the extension pinned for @ifname (chain_<ifname>), or 0. */
__u32 xrl_chain_pin_prog_id(const char *pin_dir, const char *ifname);

#endif
