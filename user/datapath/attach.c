// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "attach.h"
#include "datapath.h"
#include "dispatcher.h"
#include "pin.h"

int xrl_ifindex(const char *ifname)
{
	unsigned int ifindex;

	if (strlen(ifname) >= IF_NAMESIZE)
		return -ENODEV;
	ifindex = if_nametoindex(ifname);
	return ifindex ? (int)ifindex : -ENODEV;
}

static enum xrl_xdp_mode mode_of_attach(__u8 attach_mode)
{
	switch (attach_mode) {
	case XDP_ATTACHED_DRV:
		return XRL_XDP_NATIVE;
	case XDP_ATTACHED_SKB:
		return XRL_XDP_GENERIC;
	case XDP_ATTACHED_HW:
	case XDP_ATTACHED_MULTI:
		return XRL_XDP_OFFLOAD;
	default:
		return XRL_XDP_NONE;
	}
}

static void prog_name(__u32 prog_id, char *name, size_t len)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	int fd;

	snprintf(name, len, "?");
	fd = bpf_prog_get_fd_by_id(prog_id);
	if (fd < 0)
		return;
	if (!bpf_obj_get_info_by_fd(fd, &info, &info_len))
		snprintf(name, len, "%s", info.name);
	close(fd);
}

int xrl_xdp_query(int ifindex, struct xrl_xdp_state *state)
{
	LIBBPF_OPTS(bpf_xdp_query_opts, opts);

	memset(state, 0, sizeof(*state));
	if (bpf_xdp_query(ifindex, 0, &opts))
		return -errno;
	state->mode = mode_of_attach(opts.attach_mode);
	state->prog_id = opts.prog_id ? opts.prog_id :
			 opts.drv_prog_id ? opts.drv_prog_id :
			 opts.skb_prog_id ? opts.skb_prog_id : opts.hw_prog_id;
	if (state->prog_id)
		prog_name(state->prog_id, state->prog_name,
			  sizeof(state->prog_name));
	return 0;
}

static __u32 prog_id_of_fd(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(prog_fd, &info, &len) ? 0 : info.id;
}

static __u32 link_id_of_fd(int link_fd)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(link_fd, &info, &len) ? 0 : info.id;
}

static int create_link(int prog_fd, int ifindex, enum xrl_xdp_mode mode)
{
	LIBBPF_OPTS(bpf_link_create_opts, opts,
		.flags = mode == XRL_XDP_NATIVE ? XDP_FLAGS_DRV_MODE :
						  XDP_FLAGS_SKB_MODE);
	int fd;

	fd = bpf_link_create(prog_fd, ifindex, BPF_XDP, &opts);
	return fd < 0 ? -errno : fd;
}

/*
 * bpf_link_create() rather than bpf_program__attach_xdp(): the latter
 * cannot ask for a mode, and the same call serves a program this process
 * loaded and one adopted from its pin.
 */
static int attach_in_mode(int prog_fd, int ifindex, enum xrl_xdp_mode mode,
			  struct xrl_attach_result *result)
{
	int fd;

	result->native_err = 0;
	if (mode != XRL_XDP_AUTO) {
		result->mode = mode;
		return create_link(prog_fd, ifindex, mode);
	}
	result->mode = XRL_XDP_NATIVE;
	fd = create_link(prog_fd, ifindex, XRL_XDP_NATIVE);
	/* EBUSY/EEXIST: something got attached meanwhile; no fallback. */
	if (fd >= 0 || fd == -EBUSY || fd == -EEXIST || fd == -EPERM)
		return fd;
	result->native_err = fd;
	result->mode = XRL_XDP_GENERIC;
	return create_link(prog_fd, ifindex, XRL_XDP_GENERIC);
}

__u32 xrl_chain_pin_prog_id(const char *pin_dir, const char *ifname)
{
	char path[PATH_MAX + 32];
	__u32 id;
	int fd;

	xrl_pin_chain_path(pin_dir, ifname, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return 0;
	id = prog_id_of_fd(fd);
	close(fd);
	return id;
}

/* How to go on past a program that is not libxdp's dispatcher. */
static const char *past_a_single_program(void)
{
	char why[256];

	if (xrl_dispatcher_probe(why, sizeof(why)))
		return "; detach it first (libxdp's dispatcher, which would "
		       "run both, cannot load here)";
	return ", not through libxdp's dispatcher, so nothing can run beside "
	       "it: detach it, or load it with xdp-loader (then both chain), "
	       "and attach again";
}

/*
 * What is on @ifindex (in @chain): nothing, libxdp's dispatcher with room
 * and without a limiter (0), ours (-EALREADY), or what we must not touch
 * (-EEXIST, -E2BIG). @dp NULL: nothing of ours is loaded.
 */
static int refuse_if_taken(const struct xrl_datapath *dp, int ifindex,
			   const char *ifname, struct xrl_chain *chain,
			   char *err, size_t len)
{
	const struct xrl_chain_prog *ours;
	size_t i;
	int ret;

	ret = xrl_chain_read(ifindex, chain);
	if (ret) {
		snprintf(err, len, "%s: cannot query XDP: %s", ifname,
			 strerror(-ret));
		return ret;
	}
	if (!chain->prog_id)
		return 0;
	if (dp && chain->prog_id == prog_id_of_fd(dp->prog_fd)) {
		snprintf(err, len, "%s: xdp-ratelimit is already attached "
			 "(prog id %u, %s)", ifname, chain->prog_id,
			 xrl_xdp_mode_name(chain->mode));
		return -EALREADY;
	}
	if (!chain->dispatcher) {
		snprintf(err, len, "%s: another XDP program is attached: %s "
			 "(prog id %u, %s)%s", ifname, chain->name,
			 chain->prog_id, xrl_xdp_mode_name(chain->mode),
			 past_a_single_program());
		return -EEXIST;
	}
	ours = dp ? xrl_chain_find(chain, xrl_chain_pin_prog_id(dp->pin_dir,
								ifname)) : NULL;
	if (ours) {
		snprintf(err, len, "%s: xdp-ratelimit is already attached "
			 "(prog id %u at priority %u in libxdp's dispatcher, "
			 "%s)", ifname, ours->id, ours->priority,
			 xrl_xdp_mode_name(chain->mode));
		return -EALREADY;
	}
	for (i = 0; i < chain->n; i++) {
		if (strcmp(chain->progs[i].name, "xdp_ratelimit"))
			continue;
		snprintf(err, len, "%s: another XDP program is attached: "
			 "xdp_ratelimit (prog id %u at priority %u in libxdp's "
			 "dispatcher, %s), pinned in another directory; detach "
			 "it there first", ifname, chain->progs[i].id,
			 chain->progs[i].priority,
			 xrl_xdp_mode_name(chain->mode));
		return -EEXIST;
	}
	if (chain->n >= XRL_CHAIN_MAX) {
		snprintf(err, len, "%s: libxdp's dispatcher there runs %zu "
			 "programs, its most; detach one first", ifname,
			 chain->n);
		return -E2BIG;
	}
	return 0;
}

int xrl_attach_check(const struct xrl_datapath *dp, const char *ifname,
		     char *err, size_t len)
{
	int ifindex = xrl_ifindex(ifname);
	struct xrl_chain chain;

	if (ifindex < 0) {
		snprintf(err, len, "%s: no such interface", ifname);
		return ifindex;
	}
	return refuse_if_taken(dp, ifindex, ifname, &chain, err, len);
}

/* Alone on the interface, through a link pinned as link_<ifname>. */
static int attach_link(const struct xrl_datapath *dp, const char *ifname,
		       int ifindex, enum xrl_xdp_mode mode,
		       struct xrl_attach_result *result, char *err, size_t len)
{
	char path[PATH_MAX + 32];
	struct xrl_chain chain;
	int link_fd, ret;

	link_fd = attach_in_mode(dp->prog_fd, ifindex, mode, result);
	if (link_fd < 0) {
		if (link_fd == -EBUSY || link_fd == -EEXIST)
			return refuse_if_taken(dp, ifindex, ifname, &chain,
					       err, len) ?: link_fd;
		snprintf(err, len, "%s: cannot attach XDP in %s mode: %s%s",
			 ifname, xrl_xdp_mode_name(result->mode),
			 strerror(-link_fd),
			 link_fd == -EINVAL || link_fd == -EOPNOTSUPP ?
			 " (no XDP support?)" : "");
		return link_fd;
	}
	result->link_id = link_id_of_fd(link_fd);
	result->prog_id = prog_id_of_fd(dp->prog_fd);
	xrl_pin_link_path(dp->pin_dir, ifname, path, sizeof(path));
	if (bpf_obj_pin(link_fd, path)) {
		ret = -errno;
		snprintf(err, len, "pinning the link as %s: %s", path,
			 strerror(-ret));
		bpf_link_detach(link_fd);
		close(link_fd);
		return ret;
	}
	close(link_fd);
	return 0;
}

/* Into libxdp's dispatcher, the extension pinned as chain_<ifname>. */
static int attach_chained(const struct xrl_datapath *dp, const char *ifname,
			  int ifindex, const struct xrl_chain *chain,
			  enum xrl_xdp_mode mode, unsigned priority,
			  struct xrl_attach_result *result, char *err,
			  size_t len)
{
	char path[PATH_MAX + 32], why[256];
	int ext_fd, ret;

	if (chain->dispatcher && mode != XRL_XDP_AUTO && mode != chain->mode) {
		snprintf(err, len, "%s: libxdp's dispatcher there runs in %s "
			 "mode; attach with --mode %s or auto", ifname,
			 xrl_xdp_mode_name(chain->mode),
			 xrl_xdp_mode_name(chain->mode));
		return -EEXIST;
	}
	/* Pinned, yet not in this dispatcher (or refuse_if_taken() had said
	 * so): left by an interface of that name, gone or elsewhere. */
	xrl_pin_chain_path(dp->pin_dir, ifname, path, sizeof(path));
	if (!access(path, F_OK)) {
		snprintf(err, len, "%s: %.200s is pinned, but its program is "
			 "not in the dispatcher here (taken out by another "
			 "tool, the interface made again, or another "
			 "namespace's %s); detach %s first", ifname, path,
			 ifname, ifname);
		return -EEXIST;
	}
	ret = xrl_chain_attach(dp, ifindex, chain, mode, priority, result,
			       &ext_fd, err, len);
	if (ret)
		return ret;
	if (bpf_obj_pin(ext_fd, path)) {
		ret = -errno;
		snprintf(err, len, "pinning the program as %s: %s", path,
			 strerror(-ret));
		xrl_chain_detach(ext_fd, ifindex, why, sizeof(why));
	}
	close(ext_fd);
	return ret;
}

/* Whether to go through the dispatcher; when it cannot, @why. Not when
 * asked not to, as libxdp is (LIBXDP_SKIP_DISPATCHER=1), nor is there a
 * why then. */
static bool use_dispatcher(const struct xrl_chain *chain, char *why,
			   size_t len)
{
	const char *skip = secure_getenv("LIBXDP_SKIP_DISPATCHER");

	if (skip && !strcmp(skip, "1") && !chain->dispatcher)
		return false;
	return chain->dispatcher || !xrl_dispatcher_probe(why, len);
}

int xrl_attach(const struct xrl_datapath *dp, const char *ifname,
	       enum xrl_xdp_mode mode, unsigned priority,
	       struct xrl_attach_result *result, char *err, size_t len)
{
	struct xrl_chain chain;
	int ifindex, ret;

	memset(result, 0, sizeof(*result));
	ifindex = xrl_ifindex(ifname);
	if (ifindex < 0) {
		snprintf(err, len, "%s: no such interface", ifname);
		return ifindex;
	}
	ret = refuse_if_taken(dp, ifindex, ifname, &chain, err, len);
	if (ret)
		return ret;
	if (use_dispatcher(&chain, result->fallback, sizeof(result->fallback))) {
		ret = attach_chained(dp, ifname, ifindex, &chain, mode,
				     priority, result, err, len);
		/* libxdp could not use it after all: alone, then. */
		if (ret != -EOPNOTSUPP || !result->fallback[0])
			return ret;
	}
	return attach_link(dp, ifname, ifindex, mode, result, err, len);
}

/* The extension pinned as chain_<ifname>: out of the dispatcher (when
 * it is still in it), and its pin removed. */
static int detach_chained(const char *path, const char *ifname, char *err,
			  size_t len)
{
	int fd, ifindex, ret = 0;

	fd = bpf_obj_get(path);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/* Gone, the interface took the dispatcher down with it. */
	ifindex = xrl_ifindex(ifname);
	if (ifindex > 0)
		ret = xrl_chain_detach(fd, ifindex, err, len);
	close(fd);
	if (ret == -ENOENT)
		ret = 0;	/* not in it any more: the pin is all */
	if (!ret && unlink(path)) {
		ret = -errno;
		snprintf(err, len, "removing %s: %s", path, strerror(-ret));
	}
	return ret;
}

int xrl_detach(const char *pin_dir, const char *ifname, char *err, size_t len)
{
	char path[PATH_MAX + 32], chain_path[PATH_MAX + 32];
	int fd, ret = 0;

	xrl_pin_link_path(pin_dir, ifname, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0 && errno == ENOENT) {
		xrl_pin_chain_path(pin_dir, ifname, chain_path,
				   sizeof(chain_path));
		if (!access(chain_path, F_OK))
			return detach_chained(chain_path, ifname, err, len);
	}
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			snprintf(err, len, "%s: xdp-ratelimit is not attached "
				 "(no %s%s or %s%s in %s)", ifname,
				 XRL_LINK_PIN_PREFIX, ifname,
				 XRL_CHAIN_PIN_PREFIX, ifname, pin_dir);
		else
			snprintf(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	/* Detach explicitly: the pin may not be the link's last holder (a
	 * daemon may hold it too), yet the user asked for it to stop. An
	 * interface that is gone already took the link down: ENOLINK. */
	if (bpf_link_detach(fd) && errno != ENOLINK) {
		ret = -errno;
		snprintf(err, len, "%s: detaching: %s", ifname, strerror(-ret));
	}
	close(fd);
	if (!ret && unlink(path)) {
		ret = -errno;
		snprintf(err, len, "removing %s: %s", path, strerror(-ret));
	}
	return ret;
}

int xrl_link_read(const char *pin_dir, const char *ifname,
		  struct xrl_link_state *state)
{
	struct bpf_link_info info = {};
	__u32 len = sizeof(info);
	char path[PATH_MAX + 32];
	int fd, ret = 0;

	memset(state, 0, sizeof(*state));
	xrl_pin_link_path(pin_dir, ifname, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0)
		return -errno;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		ret = -errno;
	else {
		state->link_id = info.id;
		state->prog_id = info.prog_id;
		state->ifindex = info.xdp.ifindex;
	}
	close(fd);
	return ret;
}
