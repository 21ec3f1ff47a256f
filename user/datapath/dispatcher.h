/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * dispatcher.h - the program beside other XDP programs on an interface,
 * through libxdp's dispatcher: one XDP program on the interface that
 * calls up to ten others in turn, lowest priority number first, going on
 * to the next only on the actions the previous one chains on. Each runs
 * as a BPF_PROG_TYPE_EXT program in one of the dispatcher's slots, so it
 * is loaded anew for that (xrl_datapath_open_again(): the same object,
 * the same maps); libxdp pins the dispatcher and its programs in
 * /sys/fs/bpf/xdp/dispatch-IFINDEX-ID/. xdp-loader and xdp-filter use
 * the same dispatcher, and `xdp-loader status` shows the chain.
 *
 * The limiter chains on XDP_PASS only: what it drops, the programs after
 * it never see. Its default priority, XRL_DEFAULT_PRIORITY, puts it
 * before xdp-filter's programs (10) and libxdp's default (50).
 */
#ifndef XRL_DISPATCHER_H
#define XRL_DISPATCHER_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "xdp_mode.h"

#define XRL_DEFAULT_PRIORITY	5
#define XRL_PRIORITY_MAX	1000
#define XRL_CHAIN_MAX		10	/* the dispatcher's slots */

struct xrl_datapath;

/* "N", 0 to XRL_PRIORITY_MAX, into *@priority: 0 or -EINVAL. */
int xrl_priority_parse(const char *text, unsigned *priority);

struct xrl_chain_prog {
	__u32 id;
	unsigned priority;
	char name[64];
	char actions[80];	/* chain call actions: "XDP_PASS,XDP_DROP" */
};

/* What runs on an interface, as libxdp sees it. */
struct xrl_chain {
	__u32 prog_id;		/* on the interface; 0: nothing */
	char name[64];		/* of that program */
	bool dispatcher;	/* it is libxdp's dispatcher, and then: */
	enum xrl_xdp_mode mode;
	size_t n;
	struct xrl_chain_prog progs[XRL_CHAIN_MAX];	/* in running order */
};

/* Reads what runs on @ifindex (this network namespace's). 0 or -errno. */
int xrl_chain_read(int ifindex, struct xrl_chain *chain);

/* The program of id @prog_id in @chain's dispatcher, or NULL. */
const struct xrl_chain_prog *xrl_chain_find(const struct xrl_chain *chain,
					    __u32 prog_id);

/*
 * Whether libxdp's dispatcher can run here: 0, or -errno with @why (the
 * kernel refuses BPF_PROG_TYPE_EXT, no bpffs, no xdp-dispatcher.o). The
 * same test libxdp makes (its own dispatcher object, a slot replaced);
 * its answer is kept for the process.
 */
int xrl_dispatcher_probe(char *why, size_t len);

/*
 * Loads the data path's program again as an extension and adds it to the
 * dispatcher on @ifindex (libxdp makes one when there is none) at
 * @priority, in @mode (AUTO: the dispatcher's, else native, else generic
 * with result->native_err). On success *@ext_fd is the extension (the
 * caller pins it) and @result says where it runs. -EOPNOTSUPP with
 * result->fallback set: libxdp could not use its dispatcher after all
 * (nothing is left attached); else -errno with @err.
 */
int xrl_chain_attach(const struct xrl_datapath *dp, int ifindex,
		     const struct xrl_chain *chain, enum xrl_xdp_mode mode,
		     unsigned priority, struct xrl_attach_result *result,
		     int *ext_fd, char *err, size_t len);

/*
 * Takes the extension @ext_fd out of the dispatcher on @ifindex (libxdp
 * rebuilds it with the others, or removes it when it was the last).
 * -ENOENT when it is not there. 0 or -errno with @err.
 */
int xrl_chain_detach(int ext_fd, int ifindex, char *err, size_t len);

#endif
