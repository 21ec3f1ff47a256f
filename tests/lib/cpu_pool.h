/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * cpu_pool.h - one thread pinned to each of CPU 0 and CPU 1, judging
 * packets through BPF_PROG_TEST_RUN in rounds that start together, so
 * that both CPUs work on the same maps at the same test-clock instant.
 */
#ifndef XRL_TEST_CPU_POOL_H
#define XRL_TEST_CPU_POOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include "datapath.h"
#include "packet.h"

#define CPU_POOL_SIZE 2

struct cpu_worker {
	pthread_t thread;
	int cpu;
	struct packet pkt;	/* what it sends, set between rounds */
	uint32_t runs;		/* test runs per round; 0: idle */
	uint32_t repeat;	/* packets per test run */
	int prog_fd;		/* program run; 0: the data path's */
	int err;		/* errno of a failed run, or 0 */
	struct cpu_pool *pool;
};

struct cpu_pool {
	const struct xrl_datapath *dp;
	struct cpu_worker workers[CPU_POOL_SIZE];
	pthread_barrier_t start, done;
	volatile bool stopping;
	volatile bool halt;	/* ends a round after the runs under way */
};

/* Skips the test on a machine with fewer CPUs; starts the threads. */
void cpu_pool_start(struct cpu_pool *pool, const struct xrl_datapath *dp);

/* One round: every worker does its runs; asserts that none failed. */
void cpu_pool_round(struct cpu_pool *pool);

/* A round in two halves, for a test that acts while the workers judge:
 * begin returns once they started; end sets halt (when @halt), waits for
 * them and asserts that none failed. */
void cpu_pool_begin(struct cpu_pool *pool);
void cpu_pool_end(struct cpu_pool *pool, bool halt);

void cpu_pool_stop(struct cpu_pool *pool);

/* Packets the program passed so far on each pool CPU (pass counter). */
void cpu_pool_passed(const struct cpu_pool *pool, uint64_t out[CPU_POOL_SIZE]);

#endif
