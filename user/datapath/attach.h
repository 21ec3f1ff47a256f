/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * attach.h - the XDP program on interfaces, through bpf_links pinned as
 * <pin dir>/link_<ifname>, so it keeps enforcing after the process exits
 * and can never be replaced by accident (a link is not overwritten by a
 * plain netlink attach, nor does it overwrite another program).
 */
#ifndef XRL_ATTACH_H
#define XRL_ATTACH_H

#include <stddef.h>
#include <linux/types.h>

struct xrl_datapath;

enum xrl_xdp_mode {
	XRL_XDP_AUTO = 0,	/* native, else generic (and say so) */
	XRL_XDP_NATIVE,
	XRL_XDP_GENERIC,
	XRL_XDP_OFFLOAD,	/* only ever reported, never requested */
	XRL_XDP_NONE,
};

/* "auto", "native", "generic"; -EINVAL for anything else. */
int xrl_xdp_mode_parse(const char *text, enum xrl_xdp_mode *mode);
const char *xrl_xdp_mode_name(enum xrl_xdp_mode mode);

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

struct xrl_attach_result {
	enum xrl_xdp_mode mode;		/* the mode it got */
	int native_err;			/* auto fell back: why (-errno) */
	__u32 link_id;
};

/*
 * Whether @ifname can take the data path's program: 0 when it has no XDP
 * program, -EALREADY when it has ours, -EEXIST (@err naming the program)
 * when it has another, -ENODEV when there is no such interface.
 */
int xrl_attach_check(const struct xrl_datapath *dp, const char *ifname,
		     char *err, size_t len);

/*
 * Attaches the data path's program to @ifname in @mode and pins the link
 * in dp->pin_dir. Refuses (-EEXIST, @err naming it) when another XDP
 * program is attached; -EALREADY when ours already is.
 */
int xrl_attach(const struct xrl_datapath *dp, const char *ifname,
	       enum xrl_xdp_mode mode, struct xrl_attach_result *result,
	       char *err, size_t len);

/*
 * Detaches the link pinned for @ifname in @pin_dir and removes the pin.
 * -ENOENT (with @err) when none is pinned.
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

#endif
