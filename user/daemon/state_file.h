/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * state_file.h - the daemon's state files (policy.applied.yaml,
 * policy.runtime.json, policy.bans.json), read and written so that what
 * is planted in the state directory cannot steer a root daemon: no
 * symbolic link is followed, only a regular file is read (a FIFO or a
 * device is refused at once, never waited on), and a temporary copy is
 * always a file made new (O_CREAT | O_EXCL) beside its state file, then
 * synced and renamed into place.
 */
#ifndef XRL_STATE_FILE_H
#define XRL_STATE_FILE_H

#include <stddef.h>
#include <jansson.h>

/* Bigger than any state file: 1,048,575 runtime rules fit. */
#define XRL_STATE_FILE_MAX	(256 << 20)

/*
 * The directory of the state file @path, made (mode 0700) when missing,
 * and refused unless it is a directory, not a link, owned by the
 * daemon's user and writable by it alone: anyone else who could write
 * there could plant what the daemon reads at start. -errno with one line
 * in @err ("state directory DIR: ...").
 */
int xrl_state_dir_check(const char *path, char *err, size_t len);

/*
 * Reads the state file @path whole: *@text (NUL-ended; free() it) of
 * *@size bytes. -ENOENT when there is none (nothing in @err); else
 * -errno with one line in @err: "PATH: a FIFO, not a regular file", "PATH:
 * a symbolic link (not followed)", ...
 */
int xrl_state_read(const char *path, char **text, size_t *size, char *err,
		   size_t len);
/* The same, parsed as JSON (duplicate keys refused): a new reference. */
json_t *xrl_state_read_json(const char *path, int *ret, char *err,
			    size_t len);

/*
 * Opens PATH.tmp, made new for writing (mode 0600); a leftover there (a
 * crash's copy, a link someone planted) is removed first, never
 * followed or written through, and a link or other non-file says so in
 * a warning. Returns the fd or -errno.
 */
int xrl_state_create_tmp(const char *path);

/* @root, written whole to PATH.tmp and synced: 0 or -errno, and no
 * temporary file left on error. */
int xrl_state_stage_json(const char *path, json_t *root);
/* Renames PATH.tmp into place (0 or -errno), or removes it. */
int xrl_state_commit(const char *path);
void xrl_state_discard(const char *path);

#endif
