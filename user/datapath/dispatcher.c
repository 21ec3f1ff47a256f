// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>
#include "datapath.h"
#include "dispatcher.h"
#include "loader.h"

int xrl_priority_parse(const char *text, unsigned *priority)
{
	unsigned long value;
	char *end;

	errno = 0;
	value = strtoul(text, &end, 10);
	if (errno || *end || !*text || text[0] < '0' || text[0] > '9' ||
	    value > XRL_PRIORITY_MAX)
		return -EINVAL;
	*priority = value;
	return 0;
}

static enum xrl_xdp_mode mode_of(enum xdp_attach_mode mode)
{
	switch (mode) {
	case XDP_MODE_NATIVE:
		return XRL_XDP_NATIVE;
	case XDP_MODE_SKB:
		return XRL_XDP_GENERIC;
	case XDP_MODE_HW:
		return XRL_XDP_OFFLOAD;
	default:
		return XRL_XDP_NONE;
	}
}

static enum xdp_attach_mode libxdp_mode(enum xrl_xdp_mode mode)
{
	return mode == XRL_XDP_GENERIC ? XDP_MODE_SKB : XDP_MODE_NATIVE;
}

int xrl_chain_read(int ifindex, struct xrl_chain *chain)
{
	struct xdp_program *main_prog, *prog = NULL;
	struct xrl_chain_prog *p;
	struct xdp_multiprog *mp;
	long ret;

	memset(chain, 0, sizeof(*chain));
	chain->mode = XRL_XDP_NONE;
	mp = xdp_multiprog__get_from_ifindex(ifindex);
	ret = libxdp_get_error(mp);
	if (ret == -ENOENT || (!ret && !mp))
		return 0;	/* nothing attached */
	if (ret)
		return ret;
	main_prog = xdp_multiprog__main_prog(mp);
	if (!main_prog) {	/* an offloaded program only */
		xdp_multiprog__close(mp);
		return 0;
	}
	chain->prog_id = xdp_program__id(main_prog);
	snprintf(chain->name, sizeof(chain->name), "%s",
		 xdp_program__name(main_prog));
	chain->mode = mode_of(xdp_multiprog__attach_mode(mp));
	chain->dispatcher = !xdp_multiprog__is_legacy(mp);
	while (chain->dispatcher && chain->n < XRL_CHAIN_MAX &&
	       (prog = xdp_multiprog__next_prog(prog, mp))) {
		p = &chain->progs[chain->n++];
		p->id = xdp_program__id(prog);
		p->priority = xdp_program__run_prio(prog);
		snprintf(p->name, sizeof(p->name), "%s", xdp_program__name(prog));
		if (xdp_program__print_chain_call_actions(prog, p->actions,
							  sizeof(p->actions)))
			snprintf(p->actions, sizeof(p->actions), "?");
	}
	xdp_multiprog__close(mp);
	return 0;
}

const struct xrl_chain_prog *xrl_chain_find(const struct xrl_chain *chain,
					    __u32 prog_id)
{
	size_t i;

	for (i = 0; prog_id && i < chain->n; i++)
		if (chain->progs[i].id == prog_id)
			return &chain->progs[i];
	return NULL;
}

/* libxdp's directory for its pins, which it needs on a bpffs. */
static bool libxdp_has_bpffs(void)
{
	const char *dir = secure_getenv(XDP_BPFFS_ENVVAR);
	struct statfs fs;

	return !statfs(dir ? dir : "/sys/fs/bpf", &fs) &&
	       fs.f_type == BPF_FS_MAGIC;
}

/* xdp-dispatcher.o with only its program xdp_pass to load. */
static struct xdp_program *open_dispatcher_object(struct bpf_program **pass)
{
	struct xdp_program *xp;
	struct bpf_program *p;
	struct bpf_object *obj;

	xp = xdp_program__find_file("xdp-dispatcher.o", NULL, NULL);
	if (libxdp_get_error(xp))
		return NULL;
	obj = xdp_program__bpf_obj(xp);
	*pass = NULL;
	bpf_object__for_each_program(p, obj) {
		bool it = !strcmp(bpf_program__name(p), "xdp_pass");

		bpf_program__set_autoload(p, it);
		if (it)
			*pass = p;
	}
	if (!*pass) {
		xdp_program__close(xp);
		errno = ENOENT;
		return NULL;
	}
	return xp;
}

/*
 * libxdp's own test (libxdp_check_kern_compat(), not exported): its
 * xdp_pass loaded as XDP, and again as an extension replacing it.
 */
static int probe(char *why, size_t len)
{
	struct xdp_program *target = NULL, *ext = NULL;
	struct bpf_program *target_pass, *ext_pass;
	int ret, fd = -1;

	if (!libxdp_has_bpffs()) {
		snprintf(why, len, "no bpf filesystem at %s for its pins",
			 secure_getenv(XDP_BPFFS_ENVVAR) ?: "/sys/fs/bpf");
		return -ENOENT;
	}
	target = open_dispatcher_object(&target_pass);
	ext = target ? open_dispatcher_object(&ext_pass) : NULL;
	if (!target || !ext) {
		ret = -errno;
		snprintf(why, len, "libxdp's xdp-dispatcher.o: %s",
			 strerror(-ret));
		goto out;
	}
	ret = bpf_object__load(xdp_program__bpf_obj(target));
	if (ret) {
		snprintf(why, len, "loading libxdp's xdp-dispatcher.o: %s",
			 strerror(-ret));
		goto out;
	}
	bpf_program__set_type(ext_pass, BPF_PROG_TYPE_EXT);
	bpf_program__set_expected_attach_type(ext_pass, 0);
	ret = bpf_program__set_attach_target(ext_pass,
					     bpf_program__fd(target_pass),
					     "xdp_pass");
	if (!ret)
		ret = bpf_object__load(xdp_program__bpf_obj(ext));
	if (ret) {
		snprintf(why, len, "this kernel refuses BPF_PROG_TYPE_EXT "
			 "programs (freplace): %s", strerror(-ret));
		goto out;
	}
	fd = bpf_raw_tracepoint_open(NULL, bpf_program__fd(ext_pass));
	if (fd < 0) {
		ret = -errno;
		snprintf(why, len, "this kernel cannot attach a "
			 "BPF_PROG_TYPE_EXT program (freplace): %s",
			 strerror(-ret));
		goto out;
	}
	close(fd);
	ret = 0;
out:
	xdp_program__close(ext);
	xdp_program__close(target);
	return ret;
}

int xrl_dispatcher_probe(char *why, size_t len)
{
	static int known = 1;	/* 1: not probed yet */
	static char known_why[256];

	if (known == 1) {
		/* Its refusals are the answer, not warnings. */
		xrl_log_libbpf_quiet(true);
		known = probe(known_why, sizeof(known_why));
		xrl_log_libbpf_quiet(false);
	}
	if (known)
		snprintf(why, len, "%s", known_why);
	return known;
}

/* The kernel's names of the chain call actions are the dispatcher's. */
static int set_actions(struct xdp_program *prog)
{
	unsigned action;
	int ret = 0;

	for (action = XDP_ABORTED; !ret && action <= XDP_REDIRECT; action++)
		ret = xdp_program__set_chain_call_enabled(prog, action,
							  action == XDP_PASS);
	return ret;
}

/* What libxdp did when it could not use its dispatcher after all: our
 * program alone on the interface, by netlink. Taken off again. */
static bool undo_single(int ifindex, struct xdp_program *prog)
{
	struct xrl_chain chain;
	LIBBPF_OPTS(bpf_xdp_attach_opts, opts,
		.old_prog_fd = xdp_program__fd(prog));

	if (xrl_chain_read(ifindex, &chain) || chain.dispatcher ||
	    chain.prog_id != xdp_program__id(prog))
		return false;
	bpf_xdp_detach(ifindex, chain.mode == XRL_XDP_GENERIC ?
		       XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE, &opts);
	return true;
}

static int attach_in_mode(struct xdp_program *prog, int ifindex,
			  enum xrl_xdp_mode mode,
			  struct xrl_attach_result *result)
{
	int ret;

	result->native_err = 0;
	result->mode = mode == XRL_XDP_AUTO ? XRL_XDP_NATIVE : mode;
	ret = xdp_program__attach(prog, ifindex, libxdp_mode(result->mode), 0);
	if (!ret || mode != XRL_XDP_AUTO || ret == -EEXIST || ret == -EBUSY ||
	    ret == -EPERM || xdp_program__fd(prog) < 0)
		return ret;
	/* The extension is loaded: trying again costs no verification. */
	result->native_err = ret;
	result->mode = XRL_XDP_GENERIC;
	return xdp_program__attach(prog, ifindex, XDP_MODE_SKB, 0);
}

int xrl_chain_attach(const struct xrl_datapath *dp, int ifindex,
		     const struct xrl_chain *chain, enum xrl_xdp_mode mode,
		     unsigned priority, struct xrl_attach_result *result,
		     int *ext_fd, char *err, size_t len)
{
	struct xdp_program *prog = NULL;
	struct xrl_chain after;
	struct bpf_object *obj;
	long ret;

	*ext_fd = -1;
	if (chain->dispatcher)
		mode = chain->mode;	/* checked by the caller */
	obj = xrl_datapath_open_again(dp);
	if (!obj) {
		ret = -errno;
		if (ret == -ESTALE)
			snprintf(err, len, "the program pinned in %.200s is "
				 "from another build of xdp-ratelimit; detach "
				 "every interface first", dp->pin_dir);
		else
			snprintf(err, len, "opening the program again for "
				 "libxdp's dispatcher: %s", strerror(-ret));
		return ret;
	}
	prog = xdp_program__from_bpf_obj(obj, NULL);
	ret = libxdp_get_error(prog);
	if (ret)
		prog = NULL;
	if (!ret)
		ret = xdp_program__set_run_prio(prog, priority);
	if (!ret)
		ret = set_actions(prog);
	if (ret) {
		snprintf(err, len, "libxdp: %s", strerror((int)-ret));
		goto out;
	}
	ret = attach_in_mode(prog, ifindex, mode, result);
	if (ret == -EOPNOTSUPP && xdp_program__fd(prog) < 0) {
		snprintf(result->fallback, sizeof(result->fallback),
			 "libxdp could not use its dispatcher: %s",
			 strerror(EOPNOTSUPP));
		goto out;
	}
	if (ret) {
		snprintf(err, len, "attaching through libxdp's dispatcher in "
			 "%s mode: %s", xrl_xdp_mode_name(result->mode),
			 strerror((int)-ret));
		goto out;
	}
	if (undo_single(ifindex, prog)) {
		snprintf(result->fallback, sizeof(result->fallback),
			 "libxdp attached without its dispatcher");
		ret = -EOPNOTSUPP;
		goto out;
	}
	*ext_fd = dup(xdp_program__fd(prog));
	if (*ext_fd < 0) {
		ret = -errno;
		snprintf(err, len, "dup: %s", strerror((int)-ret));
		goto out;
	}
	result->chained = true;
	result->prog_id = xdp_program__id(prog);
	result->priority = priority;
	if (!xrl_chain_read(ifindex, &after)) {
		result->dispatcher_id = after.prog_id;
		result->others = after.n ? after.n - 1 : 0;
	}
out:
	xdp_program__close(prog);
	bpf_object__close(obj);
	return (int)ret;
}

int xrl_chain_detach(int ext_fd, int ifindex, char *err, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	struct xdp_program *prog;
	struct xrl_chain chain;
	int ret;

	if (bpf_obj_get_info_by_fd(ext_fd, &info, &info_len) ||
	    xrl_chain_read(ifindex, &chain) || !xrl_chain_find(&chain, info.id))
		return -ENOENT;
	prog = xdp_program__from_fd(ext_fd);
	ret = (int)libxdp_get_error(prog);
	if (!ret)
		ret = xdp_program__detach(prog, ifindex, XDP_MODE_UNSPEC, 0);
	if (ret)
		snprintf(err, len, "taking prog %u out of libxdp's dispatcher: "
			 "%s", info.id, strerror(-ret));
	if (prog && !libxdp_get_error(prog))
		xdp_program__close(prog);
	return ret;
}
