/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * file_load.h - a policy file read and parsed on a thread of its own, so
 * that the control loop goes on serving its clients meanwhile: reading
 * the largest policy takes seconds, and any privileged client may name a
 * file. One load at a time; it touches nothing but its own struct, and
 * says it is done by making @done_fd (an eventfd) readable.
 */
#ifndef XRL_FILE_LOAD_H
#define XRL_FILE_LOAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include "config.h"

/*
 * Or a blocklist's file (blocklist reload NAME): read and made a trie on
 * the thread as well (the trie is the slow half), left for the control
 * loop to swap in.
 */
struct xrl_list_load {
	bool active;		/* this load is of a list, not a policy */
	struct xrl_blocklist_spec spec;
	int fd;			/* the trie made, -1: none (no entries) */
	size_t entries;
};

struct xrl_file_load {
	int done_fd;		/* readable when the thread is done */
	bool running;		/* started and not yet finished */
	pthread_t thread;
	char *path;		/* the file read last, or being read */
	struct xrl_config config;	/* what it read, when @ret is 0 */
	struct xrl_list_load list;	/* a list's load instead */
	int ret;
	char err[1024];		/* the file's refusal, when @ret is not 0 */
};

/* The eventfd; 0 or -errno. */
int xrl_file_load_init(struct xrl_file_load *load);

/* Starts reading @path (xrl_config_load_file). -EBUSY while one runs. */
int xrl_file_load_start(struct xrl_file_load *load, const char *path);

/* Starts reading and building the list @spec (xrl_blocklist_build).
 * -EBUSY while a load runs. */
int xrl_file_load_start_list(struct xrl_file_load *load,
			     const struct xrl_blocklist_spec *spec);

/* Its result, once @done_fd is readable: 0 with the trie's *@fd (-1:
 * none; close it) and *@entries, or -errno with the refusal in @err. */
int xrl_file_load_finish_list(struct xrl_file_load *load, int *fd,
			      size_t *entries, char *err, size_t len);

/*
 * Waits for the thread (at once when @done_fd is readable) and hands over
 * its result: 0 with @config filled (xrl_config_free it), or -errno with
 * the refusal in @err.
 */
int xrl_file_load_finish(struct xrl_file_load *load,
			 struct xrl_config *config, char *err, size_t len);

/* Waits for a load still running, frees what it read, closes the fd. */
void xrl_file_load_free(struct xrl_file_load *load);

#endif
