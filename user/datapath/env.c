// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>
#include "env.h"

#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define VMLINUX_BTF "/sys/kernel/btf/vmlinux"

static bool has_cap(const struct __user_cap_data_struct data[2], int cap)
{
	return data[cap / 32].effective & (1U << (cap % 32));
}

int xrl_check_privileges(bool net_admin, char *err, size_t len)
{
	struct __user_cap_header_struct header = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[2] = {};
	bool bpf_ok, net_ok, admin_ok;

	if (syscall(SYS_capget, &header, data)) {
		snprintf(err, len, "cannot read capabilities: %s",
			 strerror(errno));
		return -errno;
	}
	bpf_ok = has_cap(data, CAP_BPF) || has_cap(data, CAP_SYS_ADMIN);
	net_ok = !net_admin || has_cap(data, CAP_NET_ADMIN);
	/* The maps in force are reached by id (the inner maps of the maps
	 * of maps, status's memory): bpf_map_get_fd_by_id() wants it. */
	admin_ok = has_cap(data, CAP_SYS_ADMIN);
	if (bpf_ok && net_ok && admin_ok)
		return 0;
	snprintf(err, len, "permission denied: run as root (missing%s%s%s)",
		 bpf_ok ? "" : " CAP_BPF", net_ok ? "" : " CAP_NET_ADMIN",
		 admin_ok ? "" : " CAP_SYS_ADMIN");
	return -EPERM;
}

int xrl_check_btf(char *err, size_t len)
{
	if (!access(VMLINUX_BTF, R_OK))
		return 0;
	snprintf(err, len, "kernel without BTF (%s: %s); xdp-ratelimit needs "
		 "CONFIG_DEBUG_INFO_BTF", VMLINUX_BTF, strerror(errno));
	return -ENOTSUP;
}
