// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>
#include <linux/magic.h>
#include "loader.h"
#include "pin.h"
#include "kernel.h"
#include "memory.h"

#define BPFFS_ROOT "/sys/fs/bpf"

/* The nearest ancestor of @path (or @path itself) that exists. */
static int nearest_existing(const char *path, char *out, size_t len)
{
	struct stat st;
	char *slash;

	if (snprintf(out, len, "%s", path) >= (int)len)
		return -ENAMETOOLONG;
	while (stat(out, &st)) {
		if (errno != ENOENT)
			return -errno;
		slash = strrchr(out, '/');
		if (!slash || slash == out) {
			snprintf(out, len, "/");
			break;
		}
		*slash = '\0';
	}
	return 0;
}

static bool is_bpffs(const char *path)
{
	struct statfs fs;

	return !statfs(path, &fs) && fs.f_type == BPF_FS_MAGIC;
}

static bool below_bpffs_root(const char *path)
{
	size_t n = strlen(BPFFS_ROOT);

	return !strncmp(path, BPFFS_ROOT, n) &&
	       (path[n] == '/' || path[n] == '\0');
}

/* `ip netns exec NAME` remounts /sys as a sysfs whose source is NAME. */
static bool sys_of_ip_netns_exec(void)
{
	char line[1024], source[256], path[300];
	bool found = false;
	FILE *f = fopen("/proc/self/mountinfo", "r");

	if (!f)
		return false;
	while (!found && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - sysfs ");

		if (!sep || !strstr(line, " /sys ") ||
		    sscanf(sep, " - sysfs %255s", source) != 1)
			continue;
		snprintf(path, sizeof(path), "/run/netns/%s", source);
		found = access(path, F_OK) == 0;
	}
	fclose(f);
	return found;
}

/* The parent of process @pid, or -1 when it cannot be read. */
static pid_t parent_of(pid_t pid)
{
	char path[64], line[256];
	pid_t ppid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &ppid) == 1)
			break;
	fclose(f);
	return ppid;
}

static bool same_ns(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_dev == b->st_dev;
}

/*
 * A process of another mount namespace than this one, by which to look
 * at what that namespace sees: PID 1 when it can be looked at, else
 * (a sandbox may forbid that even to root) the nearest ancestor in
 * another one (`unshare --mount` and `ip netns exec` make one for what
 * they run). 0 when this is PID 1's, or none of either is seen. Bounded:
 * a chain of processes is short.
 */
static pid_t outer_process(void)
{
	struct stat self, there;
	char path[64];
	pid_t pid;
	int hops;

	if (stat("/proc/self/ns/mnt", &self))
		return 0;
	if (!stat("/proc/1/ns/mnt", &there))
		return same_ns(&self, &there) ? 0 : 1;
	pid = getppid();
	for (hops = 0; pid > 1 && hops < 64; hops++) {
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", (int)pid);
		if (!stat(path, &there) && !same_ns(&self, &there))
			return pid;
		pid = parent_of(pid);
	}
	return 0;
}

/* Whether this process has a mount namespace of its own, not PID 1's
 * (or, when neither PID 1 nor an ancestor tells, whether `ip netns
 * exec` made it). */
static bool own_mount_ns(void)
{
	return outer_process() || sys_of_ip_netns_exec();
}

/*
 * In a mount namespace of its own (`ip netns exec` makes one), a bpffs
 * that PID 1 does not see holds pins that vanish with the namespace: an
 * attach would report success and leave nothing behind. -EXDEV then.
 */
static int check_bpffs_shared(const char *existing, char *err, size_t len)
{
	char init_path[PATH_MAX + 32];
	struct stat here, there;
	pid_t outer;

	outer = outer_process();
	if (!outer)
		return 0;
	snprintf(init_path, sizeof(init_path), "/proc/%d/root%s", (int)outer,
		 existing);
	if (stat(existing, &here) || stat(init_path, &there) ||
	    here.st_dev == there.st_dev)
		return 0;
	snprintf(err, len, "%s: a bpf filesystem of this mount namespace "
		 "only (ip netns exec?): pins made here vanish with it; run "
		 "under 'nsenter --net=/run/netns/NAME' instead", existing);
	return -EXDEV;
}

int xrl_pin_dir_check(const char *path, char *err, size_t len)
{
	char existing[PATH_MAX];
	int ret;

	if (path[0] != '/') {
		snprintf(err, len, "pin directory %s: not an absolute path", path);
		return -EINVAL;
	}
	ret = nearest_existing(path, existing, sizeof(existing));
	if (ret) {
		snprintf(err, len, "pin directory %s: %s", path, strerror(-ret));
		return ret;
	}
	if (is_bpffs(existing))
		return check_bpffs_shared(existing, err, len);
	if (!below_bpffs_root(path)) {
		snprintf(err, len, "pin directory %s: not on a bpf filesystem",
			 path);
		return -ENOTSUP;
	}
	if (own_mount_ns()) {
		snprintf(err, len, "%s: no bpf filesystem, and this is a "
			 "mount namespace of its own (ip netns exec?): pins "
			 "made here would vanish with it, and the host's are "
			 "not seen; run under 'nsenter --net=/run/netns/NAME' "
			 "instead", BPFFS_ROOT);
		return -EXDEV;
	}
	snprintf(err, len, "no bpf filesystem on %s", BPFFS_ROOT);
	return -ENODEV;
}

/* Finds bpffs under @path, or mounts it on /sys/fs/bpf (like xdp-tools). */
static int ensure_bpffs(const char *path, char *err, size_t len)
{
	int ret;

	ret = xrl_pin_dir_check(path, err, len);
	if (ret != -ENODEV)
		return ret;
	if (mount("bpf", BPFFS_ROOT, "bpf", 0, "mode=0700")) {
		ret = -errno;
		snprintf(err, len, "cannot mount bpffs on %s: %s", BPFFS_ROOT,
			 strerror(-ret));
		return ret;
	}
	return 0;
}

static int mkdir_parents(const char *path)
{
	char buf[PATH_MAX];
	char *p;

	snprintf(buf, sizeof(buf), "%s", path);
	for (p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

bool xrl_still_linked(int fd, const char *path)
{
	struct stat held, now;

	return !fstat(fd, &held) && !stat(path, &now) &&
	       held.st_dev == now.st_dev && held.st_ino == now.st_ino;
}

int xrl_pin_dir_open(struct xrl_pin_dir *dir, const char *path, bool create,
		     char *err, size_t len)
{
	int ret, fd, tries;

	dir->fd = -1;
	if (snprintf(dir->path, sizeof(dir->path), "%s", path) >=
	    (int)sizeof(dir->path)) {
		snprintf(err, len, "pin directory %s: name too long", path);
		return -ENAMETOOLONG;
	}
	ret = ensure_bpffs(path, err, len);
	if (ret)
		return ret;
	for (tries = 0; tries < 10; tries++) {
		if (create) {
			ret = mkdir_parents(path);
			if (ret) {
				snprintf(err, len, "creating %s: %s", path,
					 strerror(-ret));
				return ret;
			}
		}
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (fd < 0) {
			ret = -errno;
			snprintf(err, len, "%s: %s", path, strerror(-ret));
			return ret;
		}
		if (flock(fd, LOCK_EX)) {
			ret = -errno;
			close(fd);
			snprintf(err, len, "locking %s: %s", path, strerror(-ret));
			return ret;
		}
		if (xrl_still_linked(fd, path)) {
			dir->fd = fd;
			return 0;
		}
		close(fd);
	}
	snprintf(err, len, "%s: keeps being removed while locking it", path);
	return -EAGAIN;
}

void xrl_pin_dir_close(struct xrl_pin_dir *dir)
{
	if (dir->fd >= 0) {
		flock(dir->fd, LOCK_UN);
		close(dir->fd);
	}
	dir->fd = -1;
}

int xrl_datapath_adopt_or_load(struct xrl_datapath *dp,
			       const struct xrl_pin_dir *dir,
			       const struct xrl_load_opts *opts, bool *loaded,
			       char *err, size_t len)
{
	int ret;

	*loaded = false;
	ret = xrl_datapath_open_pinned(dp, dir->path);
	if (!ret)
		return 0;
	if (ret != -ENOENT) {
		snprintf(err, len, "opening the pins in %s: %s", dir->path,
			 strerror(-ret));
		return ret;
	}
	if (xrl_kernel_lacks(err, len))
		return -EOPNOTSUPP;
	ret = xrl_datapath_load(dp, opts);
	if (ret) {
		snprintf(err, len, "loading the XDP program: %s", strerror(-ret));
		return ret;
	}
	/* Loaded, not pinned: a refusal leaves nothing behind. */
	ret = xrl_memory_check(dp, opts ? opts->memory_limit : 0, err, len);
	if (ret) {
		xrl_datapath_close(dp);
		return ret;
	}
	ret = xrl_datapath_pin(dp, dir->path);
	if (ret) {
		snprintf(err, len, "pinning in %s: %s", dir->path,
			 strerror(-ret));
		xrl_datapath_close(dp);
		return ret;
	}
	*loaded = true;
	return 0;
}

void xrl_pin_link_path(const char *dir, const char *ifname, char *path,
		       size_t len)
{
	snprintf(path, len, "%s/%s%s", dir, XRL_LINK_PIN_PREFIX, ifname);
}

void xrl_pin_chain_path(const char *dir, const char *ifname, char *path,
			size_t len)
{
	snprintf(path, len, "%s/%s%s", dir, XRL_CHAIN_PIN_PREFIX, ifname);
}

bool xrl_pin_has_iface(const char *dir, const char *ifname)
{
	char path[PATH_MAX + 32];
	struct stat st;

	xrl_pin_link_path(dir, ifname, path, sizeof(path));
	if (!stat(path, &st))
		return true;
	xrl_pin_chain_path(dir, ifname, path, sizeof(path));
	return !stat(path, &st);
}

/* The interface a pin is for, or NULL when it is no link or extension. */
static const char *pin_iface(const char *name)
{
	static const char *const prefixes[] = {
		XRL_LINK_PIN_PREFIX, XRL_CHAIN_PIN_PREFIX,
	};
	size_t i, n;

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		n = strlen(prefixes[i]);
		if (!strncmp(name, prefixes[i], n) && name[n])
			return name + n;
	}
	return NULL;
}

int xrl_pin_for_each_link(const char *dir,
			  int (*fn)(const char *ifname, void *ctx), void *ctx)
{
	struct dirent *entry;
	const char *ifname;
	DIR *d;
	int ret = 0;

	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while (!ret && (entry = readdir(d)))
		if ((ifname = pin_iface(entry->d_name)))
			ret = fn(ifname, ctx);
	closedir(d);
	return ret;
}

int xrl_pin_remove_if_unused(const char *pin_dir, char *err, size_t len)
{
	struct xrl_datapath dp;
	int ret;

	ret = xrl_pin_count_links(pin_dir);
	if (ret != 0)
		goto fail;
	ret = xrl_datapath_open_pinned(&dp, pin_dir);
	if (ret == -ENOENT)
		return 0;
	if (!ret)
		ret = xrl_datapath_unpin(&dp);
	xrl_datapath_close(&dp);
	if (!ret)
		return 1;
fail:
	if (ret < 0)
		snprintf(err, len, "removing the pins in %s: %s", pin_dir,
			 strerror(-ret));
	return ret < 0 ? ret : 0;
}

static int count_one(const char *ifname, void *ctx)
{
	(*(int *)ctx)++;
	return 0;
}

int xrl_pin_count_links(const char *dir)
{
	int n = 0, ret;

	ret = xrl_pin_for_each_link(dir, count_one, &n);
	return ret < 0 ? ret : n;
}
