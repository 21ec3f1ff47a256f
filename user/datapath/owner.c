// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include "owner.h"
#include "pin.h"

#define RECORD_PREFIX "pins-"
#define RECORD_SUFFIX ".owner"

/* @pin_dir as one name: resolved when it exists, so that two spellings
 * of one directory meet; else with redundant slashes dropped. */
static void canonical_pin_dir(const char *pin_dir, char *out, size_t len)
{
	char resolved[PATH_MAX];
	size_t n = 0;
	const char *p;

	if (realpath(pin_dir, resolved))
		pin_dir = resolved;
	for (p = pin_dir; *p && n + 1 < len; p++) {
		if (*p == '/' && (p[1] == '/' || p[1] == '\0') && n)
			continue;
		out[n++] = *p;
	}
	out[n] = '\0';
}

int xrl_owner_record_path(const char *pin_dir, char *path, size_t len)
{
	char canonical[PATH_MAX], name[NAME_MAX + 1];
	size_t n;
	const char *p;
	int used;

	canonical_pin_dir(pin_dir, canonical, sizeof(canonical));
	used = snprintf(name, sizeof(name), "%s", RECORD_PREFIX);
	for (p = canonical[0] == '/' ? canonical + 1 : canonical; *p; p++) {
		n = sizeof(name) - used;
		if (isalnum((unsigned char)*p) || *p == '.' || *p == '_')
			used += snprintf(name + used, n, "%c", *p);
		else if (*p == '/')
			used += snprintf(name + used, n, "-");
		else
			used += snprintf(name + used, n, "%%%02x",
					 (unsigned char)*p);
		if (used >= (int)sizeof(name))
			return -ENAMETOOLONG;
	}
	if (used + strlen(RECORD_SUFFIX) >= sizeof(name) ||
	    snprintf(path, len, "%s/%s%s", XRL_OWNER_DIR, name,
		     RECORD_SUFFIX) >= (int)len)
		return -ENAMETOOLONG;
	return 0;
}

/* What the record open at @fd says: its holder's pid and socket (pid 0
 * when it has not written them yet). */
static void read_record(int fd, pid_t *pid, char *socket, size_t len)
{
	char text[PATH_MAX + 32], format[32];
	ssize_t got;
	int n = 0;

	*pid = 0;
	snprintf(socket, len, "?");
	got = pread(fd, text, sizeof(text) - 1, 0);
	if (got <= 0)
		return;
	text[got] = '\0';
	snprintf(format, sizeof(format), "%%d %%%zu[^\n]", len - 1);
	if (sscanf(text, format, &n, socket) == 2 && n > 0)
		*pid = n;
}

static int write_record(int fd, const char *socket)
{
	char text[PATH_MAX + 32];
	int n;

	n = snprintf(text, sizeof(text), "%d %s\n", (int)getpid(), socket);
	if (n >= (int)sizeof(text))
		return -ENAMETOOLONG;
	if (ftruncate(fd, 0) || pwrite(fd, text, n, 0) != n)
		return errno ? -errno : -EIO;
	return 0;
}

static int say_busy(int fd, const char *pin_dir, char *err, size_t len)
{
	char socket[PATH_MAX];
	pid_t pid;

	read_record(fd, &pid, socket, sizeof(socket));
	snprintf(err, len, "pin directory %s is managed by xdp-ratelimitd "
		 "(pid %d, socket %s): stop it first, or give this one another "
		 "--pin-dir", pin_dir, (int)pid, socket);
	return -EBUSY;
}

/* Opens the record at @path and flocks it without waiting: the fd, or
 * -errno (-EWOULDBLOCK when held, with *@held_fd the fd to read it). */
static int open_locked(const char *path, int *held_fd)
{
	int fd, ret;

	*held_fd = -1;
	fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (!flock(fd, LOCK_EX | LOCK_NB))
		return fd;
	ret = -errno;
	if (ret == -EWOULDBLOCK)
		*held_fd = fd;
	else
		close(fd);
	return ret;
}

int xrl_owner_take(struct xrl_owner *owner, const char *pin_dir,
		   const char *socket, char *err, size_t len)
{
	int ret, fd, held, tries;

	owner->fd = -1;
	ret = xrl_owner_record_path(pin_dir, owner->path, sizeof(owner->path));
	if (ret) {
		snprintf(err, len, "pin directory %s: too long a name for its "
			 "owner record in %s", pin_dir, XRL_OWNER_DIR);
		return ret;
	}
	if (mkdir(XRL_OWNER_DIR, 0755) && errno != EEXIST) {
		ret = -errno;
		snprintf(err, len, "creating %s: %s", XRL_OWNER_DIR,
			 strerror(-ret));
		return ret;
	}
	/* A holder that ends removes the record: one opened just before
	 * is then no longer the one at the path; open it again. */
	for (tries = 0; tries < 10; tries++) {
		fd = open_locked(owner->path, &held);
		if (fd == -EWOULDBLOCK) {
			ret = say_busy(held, pin_dir, err, len);
			close(held);
			return ret;
		}
		if (fd < 0) {
			snprintf(err, len, "%s: %s", owner->path,
				 strerror(-fd));
			return fd;
		}
		if (xrl_still_linked(fd, owner->path))
			break;
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		snprintf(err, len, "%s: keeps being removed while locking it",
			 owner->path);
		return -EAGAIN;
	}
	ret = write_record(fd, socket);
	if (ret) {
		snprintf(err, len, "writing %s: %s", owner->path,
			 strerror(-ret));
		unlink(owner->path);
		close(fd);
		return ret;
	}
	owner->fd = fd;
	return 0;
}

void xrl_owner_release(struct xrl_owner *owner)
{
	if (owner->fd < 0)
		return;
	if (xrl_still_linked(owner->fd, owner->path))
		unlink(owner->path);
	close(owner->fd);
	owner->fd = -1;
}

int xrl_owner_find(const char *pin_dir, pid_t *pid, char *socket,
		   size_t len)
{
	char path[PATH_MAX];
	int fd, ret;

	ret = xrl_owner_record_path(pin_dir, path, sizeof(path));
	if (ret)
		return ret;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	/* A record nobody holds is one a killed daemon left. */
	if (!flock(fd, LOCK_SH | LOCK_NB)) {
		close(fd);
		return 0;
	}
	ret = errno == EWOULDBLOCK ? 1 : -errno;
	if (ret == 1)
		read_record(fd, pid, socket, len);
	close(fd);
	return ret;
}
