// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <criterion/criterion.h>
#include "topo.h"

#define NETNS_DIR "/run/netns"
#define BPFFS "/sys/fs/bpf"

int topo_sh(const char *fmt, ...)
{
	char cmd[2048];
	va_list args;
	int status;

	va_start(args, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, args);
	va_end(args);
	status = system(cmd);
	if (status == -1 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* The pid in a name "xrlt<pid>...", or 0 when it is not one of ours. */
static pid_t name_pid(const char *name)
{
	size_t n = strlen(TOPO_PREFIX);
	char *end;
	long pid;

	if (strncmp(name, TOPO_PREFIX, n))
		return 0;
	pid = strtol(name + n, &end, 10);
	if (end == name + n || pid <= 0 || (*end && *end != '-' &&
					    *end != 't' && *end != 'r'))
		return 0;
	return pid;
}

/* Ours to remove: made by this process, or by one that is gone. */
static bool removable(const char *name)
{
	pid_t pid = name_pid(name);

	if (!pid)
		return false;
	return pid == getpid() || (kill(pid, 0) && errno == ESRCH);
}

static void remove_matching(const char *dir, const char *cmd_fmt)
{
	struct dirent *entry;
	DIR *d = opendir(dir);

	if (!d)
		return;
	while ((entry = readdir(d)))
		if (removable(entry->d_name))
			topo_sh(cmd_fmt, entry->d_name);
	closedir(d);
}

void topo_cleanup_leftovers(void)
{
	/* Deleting a namespace deletes its veth end, and the peer with it;
	 * a veth still in the root namespace is one a run died creating. */
	remove_matching(NETNS_DIR, "ip netns del %s 2>/dev/null");
	remove_matching("/sys/class/net", "ip link del %s 2>/dev/null");
	remove_matching(BPFFS, "rm -rf " BPFFS "/%s");
	remove_matching("/tmp", "rm -f /tmp/%s");
}

void topo_read_mac(const char *ns, const char *ifname, uint8_t mac[6])
{
	struct ifreq ifr = {};
	int fd = topo_socket_in(ns, AF_INET, SOCK_DGRAM, 0);

	cr_assert_geq(fd, 0, "socket in %s: %s", ns, strerror(-fd));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	cr_assert_eq(ioctl(fd, SIOCGIFHWADDR, &ifr), 0, "MAC of %s: %s",
		     ifname, strerror(errno));
	memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	close(fd);
}

int topo_ifindex_in(const char *ns, const char *ifname)
{
	struct ifreq ifr = {};
	int fd = topo_socket_in(ns, AF_INET, SOCK_DGRAM, 0);
	int ret;

	if (fd < 0)
		return fd;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	ret = ioctl(fd, SIOCGIFINDEX, &ifr) ? -errno : ifr.ifr_ifindex;
	close(fd);
	return ret;
}

static const char *const setup_steps[] = {
	"ip netns add %1$s",
	"ip netns add %2$s",
	"ip link add %3$s type veth peer name %4$s",
	"ip link set %3$s netns %1$s",
	"ip link set %4$s netns %2$s",
	"ip -n %1$s addr add 198.18.0.1/24 dev %3$s",
	"ip -n %2$s addr add 198.18.0.2/24 dev %4$s",
	"ip -n %1$s addr add fd00:5::1/64 dev %3$s nodad",
	"ip -n %2$s addr add fd00:5::2/64 dev %4$s nodad",
	"ip -n %1$s link set %3$s up",
	"ip -n %2$s link set %4$s up",
};

void topo_create(struct topo *t)
{
	char cmd[512];
	size_t i;

	memset(t, 0, sizeof(*t));
	t->pid = getpid();
	t->cli_prefix = "";
	topo_cleanup_leftovers();
	snprintf(t->ns_tx, sizeof(t->ns_tx), TOPO_PREFIX "%d-tx", t->pid);
	snprintf(t->ns_rx, sizeof(t->ns_rx), TOPO_PREFIX "%d-rx", t->pid);
	snprintf(t->if_tx, sizeof(t->if_tx), TOPO_PREFIX "%dt", t->pid);
	snprintf(t->if_rx, sizeof(t->if_rx), TOPO_PREFIX "%dr", t->pid);
	snprintf(t->pin_dir, sizeof(t->pin_dir), BPFFS "/" TOPO_PREFIX "%d",
		 t->pid);
	for (i = 0; i < sizeof(setup_steps) / sizeof(setup_steps[0]); i++) {
		snprintf(cmd, sizeof(cmd), setup_steps[i], t->ns_tx, t->ns_rx,
			 t->if_tx, t->if_rx);
		if (topo_sh("%s", cmd)) {
			topo_destroy(t);
			cr_assert_fail("topology: '%s' failed", cmd);
		}
	}
	t->tx_ifindex = topo_ifindex_in(t->ns_tx, t->if_tx);
	t->rx_ifindex = topo_ifindex_in(t->ns_rx, t->if_rx);
	cr_assert_gt(t->tx_ifindex, 0);
	cr_assert_gt(t->rx_ifindex, 0);
	topo_read_mac(t->ns_tx, t->if_tx, t->tx_mac);
	topo_read_mac(t->ns_rx, t->if_rx, t->rx_mac);
}

void topo_destroy(struct topo *t)
{
	if (!t->pid)
		return;
	topo_sh("ip netns del %s 2>/dev/null", t->ns_tx);
	topo_sh("ip netns del %s 2>/dev/null", t->ns_rx);
	topo_sh("ip link del %s 2>/dev/null", t->if_tx);
	topo_sh("rm -rf %s %s-*", t->pin_dir, t->pin_dir);
	topo_sh("rm -f /tmp/" TOPO_PREFIX "%d-*", t->pid);
	t->pid = 0;
}

int topo_socket_in(const char *ns, int domain, int type, int protocol)
{
	char path[PATH_MAX];
	int home, there, fd, ret;

	home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (home < 0)
		return -errno;
	snprintf(path, sizeof(path), NETNS_DIR "/%s", ns);
	there = open(path, O_RDONLY | O_CLOEXEC);
	if (there < 0) {
		ret = -errno;
		goto close_home;
	}
	if (setns(there, CLONE_NEWNET)) {
		ret = -errno;
		goto close_there;
	}
	/* A socket stays in the namespace it was made in. */
	fd = socket(domain, type | SOCK_CLOEXEC, protocol);
	ret = fd < 0 ? -errno : fd;
	if (setns(home, CLONE_NEWNET))
		cr_assert_fail("cannot return to the test's namespace");
close_there:
	close(there);
close_home:
	close(home);
	return ret;
}

/* Linux 6.3 UAPI (if_link.h); Debian 12's headers predate it, and so
 * does its iproute2 ("ip link set gso_ipv4_max_size"). */
#define TOPO_IFLA_GSO_IPV4_MAX_SIZE 63

int topo_set_gso_ipv4_max_size(const char *ns, int ifindex, uint32_t size)
{
	struct {
		struct nlmsghdr nh;
		struct ifinfomsg ifi;
		struct rtattr rta;
		uint32_t value;
	} req = {
		.nh = {
			.nlmsg_len = sizeof(req),
			.nlmsg_type = RTM_NEWLINK,
			.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK,
		},
		.ifi = { .ifi_family = AF_UNSPEC, .ifi_index = ifindex },
		.rta = {
			.rta_len = RTA_LENGTH(sizeof(uint32_t)),
			.rta_type = TOPO_IFLA_GSO_IPV4_MAX_SIZE,
		},
		.value = size,
	};
	char reply[1024];
	struct nlmsghdr *nh = (struct nlmsghdr *)reply;
	int fd = topo_socket_in(ns, AF_NETLINK, SOCK_RAW, NETLINK_ROUTE);
	ssize_t n;
	int ret;

	if (fd < 0)
		return fd;
	if (send(fd, &req, sizeof(req), 0) != sizeof(req)) {
		ret = -errno;
		goto close_fd;
	}
	n = recv(fd, reply, sizeof(reply), 0);
	if (n < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)))
		ret = n < 0 ? -errno : -EPROTO;
	else if (nh->nlmsg_type != NLMSG_ERROR)
		ret = -EPROTO;
	else
		ret = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
close_fd:
	close(fd);
	return ret;
}

void topo_cli_path(char *path, size_t len)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	cr_assert_gt(n, 0);
	exe[n] = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	slash = strrchr(exe, '/');
	*slash = '\0';
	snprintf(path, len, "%s/xdp-ratelimit", exe);
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f;
	size_t n = 0;

	if (!buf)
		return;
	buf[0] = '\0';
	f = fopen(path, "r");
	if (!f)
		return;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

int topo_cli(const struct topo *t, char *out, size_t out_len, char *err,
	     size_t err_len, const char *args_fmt, ...)
{
	char cli[PATH_MAX], args[1024], out_path[64], err_path[64];
	va_list ap;
	int status;

	topo_cli_path(cli, sizeof(cli));
	va_start(ap, args_fmt);
	vsnprintf(args, sizeof(args), args_fmt, ap);
	va_end(ap);
	snprintf(out_path, sizeof(out_path), "/tmp/" TOPO_PREFIX "%d-cli.out",
		 getpid());
	snprintf(err_path, sizeof(err_path), "/tmp/" TOPO_PREFIX "%d-cli.err",
		 getpid());
	status = topo_sh("nsenter --net=" NETNS_DIR "/%s %s %s --pin-dir %s %s "
			 ">%s 2>%s", t->cli_ns ? t->cli_ns : t->ns_rx,
			 t->cli_prefix, cli, t->pin_dir,
			 args, out_path, err_path);
	read_file(out_path, out, out_len);
	read_file(err_path, err, err_len);
	unlink(out_path);
	unlink(err_path);
	return status;
}

void topo_attach_policy(const struct topo *t, const char *yaml)
{
	char path[64], err[4096];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/" TOPO_PREFIX "%d-policy.yaml",
		 t->pid);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(yaml, f);
	fclose(f);
	cr_assert_eq(topo_cli(t, NULL, 0, err, sizeof(err),
			      "attach %s --policy %s", t->if_rx, path), 0,
		     "attach: %s", err);
}
