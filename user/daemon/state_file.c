// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * state_file.c - reading and writing the daemon's state files
 * (state_file.h).
 *
 * The state directory is the daemon's, but it runs as root: a link
 * planted at PATH.tmp would have it write through the link, and a FIFO
 * at PATH would hold its start for ever. So a state file is looked at
 * with lstat() before it is opened (a non-file is refused unopened),
 * opened with O_NOFOLLOW | O_NONBLOCK and checked again with fstat()
 * (what was swapped in between is refused too), and a temporary copy is
 * made with O_CREAT | O_EXCL | O_NOFOLLOW after removing whatever had
 * its name: unlink() removes a link, not what it points to.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <jansson.h>
#include "log.h"
#include "state_file.h"

static const char *kind_name(mode_t mode)
{
	if (S_ISLNK(mode))
		return "a symbolic link (not followed)";
	if (S_ISFIFO(mode))
		return "a FIFO, not a regular file";
	if (S_ISDIR(mode))
		return "a directory, not a regular file";
	if (S_ISSOCK(mode))
		return "a socket, not a regular file";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device, not a regular file";
	return "not a regular file";
}

/* @path's directory, made when missing; what lstat() says of it. */
static int state_dir(const char *path, char *dir, size_t size,
		     struct stat *st)
{
	char *slash;

	if (snprintf(dir, size, "%s", path) >= (int)size)
		return -ENAMETOOLONG;
	slash = strrchr(dir, '/');
	if (!slash)
		snprintf(dir, size, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (!lstat(dir, st))
		return 0;
	if (errno != ENOENT || mkdir(dir, 0700))
		return -errno;
	return lstat(dir, st) ? -errno : 0;
}

int xrl_state_dir_check(const char *path, char *err, size_t len)
{
	char dir[PATH_MAX];
	struct stat st;
	int ret;

	ret = state_dir(path, dir, sizeof(dir), &st);
	if (ret) {
		snprintf(err, len, "state directory of %s: %s", path,
			 strerror(-ret));
		return ret;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, len, "state directory %s: %s", dir,
			 S_ISLNK(st.st_mode) ? "a symbolic link (not followed)"
					     : "not a directory");
		return -ENOTDIR;
	}
	if (st.st_uid != geteuid()) {
		snprintf(err, len, "state directory %s: owned by uid %u, not "
			 "by the daemon's uid %u", dir, (unsigned)st.st_uid,
			 (unsigned)geteuid());
		return -EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		snprintf(err, len, "state directory %s: writable by its group "
			 "or others (mode %04o): chmod go-w it", dir,
			 (unsigned)(st.st_mode & 07777));
		return -EPERM;
	}
	return 0;
}

static int tmp_path(const char *path, char *tmp, size_t len)
{
	return snprintf(tmp, len, "%s.tmp", path) >= (int)len ?
		       -ENAMETOOLONG : 0;
}

/* Reads @fd to its end, at most XRL_STATE_FILE_MAX bytes. */
static int read_all(int fd, char **text, size_t *size)
{
	size_t cap = 65536, got = 0;
	char *buf = malloc(cap + 1), *grown;
	ssize_t n;

	if (!buf)
		return -ENOMEM;
	for (;;) {
		if (got == cap) {
			if (cap >= XRL_STATE_FILE_MAX) {
				free(buf);
				return -EFBIG;
			}
			cap *= 2;
			grown = realloc(buf, cap + 1);
			if (!grown) {
				free(buf);
				return -ENOMEM;
			}
			buf = grown;
		}
		n = read(fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			n = -errno;
			free(buf);
			return (int)n;
		}
		if (!n)
			break;
		got += n;
	}
	buf[got] = '\0';
	*text = buf;
	*size = got;
	return 0;
}

int xrl_state_read(const char *path, char **text, size_t *size, char *err,
		   size_t len)
{
	struct stat st;
	int fd, ret;

	if (lstat(path, &st)) {
		ret = -errno;
		if (ret != -ENOENT)
			snprintf(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, len, "%s: %s", path, kind_name(st.st_mode));
		return -EINVAL;
	}
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY |
		  O_CLOEXEC);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, len, "%s: %s", path, ret == -ELOOP ?
			 kind_name(S_IFLNK) : strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		snprintf(err, len, "%s: %s", path, kind_name(st.st_mode));
		close(fd);
		return -EINVAL;
	}
	ret = read_all(fd, text, size);
	close(fd);
	if (ret)
		snprintf(err, len, "%s: cannot read: %s", path, strerror(-ret));
	return ret;
}

json_t *xrl_state_read_json(const char *path, int *ret, char *err,
			    size_t len)
{
	json_error_t jerr;
	json_t *root;
	size_t size;
	char *text;

	*ret = xrl_state_read(path, &text, &size, err, len);
	if (*ret)
		return NULL;
	root = json_loadb(text, size, JSON_REJECT_DUPLICATES, &jerr);
	free(text);
	if (!root) {
		snprintf(err, len, "%s:%d: %s", path, jerr.line, jerr.text);
		*ret = -EINVAL;
	}
	return root;
}

int xrl_state_create_tmp(const char *path)
{
	char tmp[PATH_MAX + 8];
	struct stat st;
	int fd, tries, ret;

	ret = tmp_path(path, tmp, sizeof(tmp));
	if (ret)
		return ret;
	for (tries = 0; tries < 2; tries++) {
		fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
			  O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
		if (!lstat(tmp, &st) && !S_ISREG(st.st_mode))
			pr_warn("%s: %s in place of the temporary copy: "
				"removed", tmp, kind_name(st.st_mode));
		if (unlink(tmp) && errno != ENOENT)
			return -errno;
	}
	return -EEXIST;
}

int xrl_state_stage_json(const char *path, json_t *root)
{
	char tmp[PATH_MAX + 8];
	int fd, ret = 0;

	ret = tmp_path(path, tmp, sizeof(tmp));
	if (ret)
		return ret;
	fd = xrl_state_create_tmp(path);
	if (fd < 0)
		return fd;
	errno = 0;
	if (json_dumpfd(root, fd, JSON_INDENT(2)) ||
	    write(fd, "\n", 1) != 1 || fsync(fd))
		ret = errno ? -errno : -EIO;
	if (close(fd) && !ret)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

int xrl_state_commit(const char *path)
{
	char tmp[PATH_MAX + 8];
	int ret = tmp_path(path, tmp, sizeof(tmp));

	if (ret)
		return ret;
	return rename(tmp, path) ? -errno : 0;
}

void xrl_state_discard(const char *path)
{
	char tmp[PATH_MAX + 8];

	if (!tmp_path(path, tmp, sizeof(tmp)))
		unlink(tmp);
}
