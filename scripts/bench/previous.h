/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * previous.h - a previous commit's data path, held by its own process
 * (prevhost.c, built by scripts/bench/previous against that commit), its
 * programs taken into this one with pidfd_getfd(2) so that the
 * microbenchmarks run them beside the current ones.
 */
#ifndef XRL_BENCH_PREVIOUS_H
#define XRL_BENCH_PREVIOUS_H

#include <stddef.h>
#include <sys/types.h>

struct prev_host {
	pid_t pid;
	int to_host;		/* its stdin */
	FILE *from_host;	/* its stdout */
	int prog_fd;		/* production clock, in this process */
	int buckets_fd;
	int clockless_fd;	/* test clock */
	char commit[48];
};

/* Starts the host @path and takes its fds. 0 or -errno (logged). */
int prev_host_start(struct prev_host *host, const char *path);

/* The previous data path with @n_rules limit rules and no new-source
 * budget, as bench_apply_rules(); 0 or -errno (logged). */
int prev_host_rules(struct prev_host *host, size_t n_rules);

/* 1 rule and the default new-source budget. */
int prev_host_budget(struct prev_host *host);

/* @n_rules rules on the test-clock data path. */
int prev_host_clockless(struct prev_host *host, size_t n_rules);

/* Ends the host (end of its input) and closes the fds. */
void prev_host_stop(struct prev_host *host);

#endif
