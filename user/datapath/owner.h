/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * owner.h - the one daemon that manages a pin directory. bpffs holds no
 * regular files, and the pin directory's own flock is every changer's
 * (held only while changing), so the daemon holds an flock on a record
 * file in XRL_OWNER_DIR named for the pin directory, as long as it runs:
 * the kernel lets it go when the daemon dies, however it dies. The record
 * says who holds it: "PID SOCKET\n".
 */
#ifndef XRL_OWNER_H
#define XRL_OWNER_H

#include <limits.h>
#include <stddef.h>
#include <sys/types.h>

/* The unit's RuntimeDirectory: writable under ProtectSystem=strict. */
#define XRL_OWNER_DIR "/run/xdp-ratelimit"

struct xrl_owner {
	char path[PATH_MAX];	/* the record */
	int fd;			/* open and flocked; -1 when not held */
};

/*
 * Writes the record's path for @pin_dir into @path: XRL_OWNER_DIR/
 * "pins-<pin dir>.owner", the pin directory resolved (realpath) when it
 * exists, else with redundant slashes dropped, each '/' as '-' and every
 * byte but letters, digits, '.' and '_' as %XX. -ENAMETOOLONG when that
 * is too long a name.
 */
int xrl_owner_record_path(const char *pin_dir, char *path, size_t len);

/*
 * Takes the record of @pin_dir for this process and writes its pid and
 * @socket in it. -EBUSY when a running daemon holds it, with @err naming
 * the pin directory and that daemon (pid, socket); other -errno with @err
 * saying why.
 */
int xrl_owner_take(struct xrl_owner *owner, const char *pin_dir,
		   const char *socket, char *err, size_t len);

/* Removes the record and lets it go (nothing when not held). */
void xrl_owner_release(struct xrl_owner *owner);

/*
 * Whether a running daemon holds the record of @pin_dir: 1 with its pid
 * and socket (what the record says), 0 when none does, -errno.
 */
int xrl_owner_find(const char *pin_dir, pid_t *pid, char *socket,
		   size_t len);

#endif
