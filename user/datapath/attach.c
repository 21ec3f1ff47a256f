// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <linux/if_link.h>
#include "attach.h"
#include "datapath.h"
#include "pin.h"

static const char *const mode_names[] = {
	[XRL_XDP_AUTO] = "auto",
	[XRL_XDP_NATIVE] = "native",
	[XRL_XDP_GENERIC] = "generic",
	[XRL_XDP_OFFLOAD] = "offload",
	[XRL_XDP_NONE] = "none",
};

const char *xrl_xdp_mode_name(enum xrl_xdp_mode mode)
{
	return mode <= XRL_XDP_NONE ? mode_names[mode] : "?";
}

int xrl_xdp_mode_parse(const char *text, enum xrl_xdp_mode *mode)
{
	enum xrl_xdp_mode m;

	for (m = XRL_XDP_AUTO; m <= XRL_XDP_GENERIC; m++) {
		if (!strcmp(text, mode_names[m])) {
			*mode = m;
			return 0;
		}
	}
	return -EINVAL;
}

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

static int refuse_if_taken(const struct xrl_datapath *dp, int ifindex,
			   const char *ifname, char *err, size_t len)
{
	struct xrl_xdp_state state;
	int ret;

	ret = xrl_xdp_query(ifindex, &state);
	if (ret) {
		snprintf(err, len, "%s: cannot query XDP: %s", ifname,
			 strerror(-ret));
		return ret;
	}
	if (!state.prog_id)
		return 0;
	if (state.prog_id == prog_id_of_fd(dp->prog_fd)) {
		snprintf(err, len, "%s: xdp-ratelimit is already attached "
			 "(prog id %u, %s)", ifname, state.prog_id,
			 xrl_xdp_mode_name(state.mode));
		return -EALREADY;
	}
	snprintf(err, len, "%s: another XDP program is attached: %s "
		 "(prog id %u, %s); detach it first", ifname, state.prog_name,
		 state.prog_id, xrl_xdp_mode_name(state.mode));
	return -EEXIST;
}

int xrl_attach_check(const struct xrl_datapath *dp, const char *ifname,
		     char *err, size_t len)
{
	int ifindex = xrl_ifindex(ifname);

	if (ifindex < 0) {
		snprintf(err, len, "%s: no such interface", ifname);
		return ifindex;
	}
	return refuse_if_taken(dp, ifindex, ifname, err, len);
}

int xrl_attach(const struct xrl_datapath *dp, const char *ifname,
	       enum xrl_xdp_mode mode, struct xrl_attach_result *result,
	       char *err, size_t len)
{
	char path[PATH_MAX + 32];
	int ifindex, link_fd, ret;

	ifindex = xrl_ifindex(ifname);
	if (ifindex < 0) {
		snprintf(err, len, "%s: no such interface", ifname);
		return ifindex;
	}
	ret = refuse_if_taken(dp, ifindex, ifname, err, len);
	if (ret)
		return ret;
	link_fd = attach_in_mode(dp->prog_fd, ifindex, mode, result);
	if (link_fd < 0) {
		if (link_fd == -EBUSY || link_fd == -EEXIST)
			return refuse_if_taken(dp, ifindex, ifname, err, len) ?:
			       link_fd;
		snprintf(err, len, "%s: cannot attach XDP in %s mode: %s%s",
			 ifname, xrl_xdp_mode_name(result->mode),
			 strerror(-link_fd),
			 link_fd == -EINVAL || link_fd == -EOPNOTSUPP ?
			 " (no XDP support?)" : "");
		return link_fd;
	}
	result->link_id = link_id_of_fd(link_fd);
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

int xrl_detach(const char *pin_dir, const char *ifname, char *err, size_t len)
{
	char path[PATH_MAX + 32];
	int fd, ret = 0;

	xrl_pin_link_path(pin_dir, ifname, path, sizeof(path));
	fd = bpf_obj_get(path);
	if (fd < 0) {
		ret = -errno;
		if (ret == -ENOENT)
			snprintf(err, len, "%s: xdp-ratelimit is not attached "
				 "(no %s)", ifname, path);
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
