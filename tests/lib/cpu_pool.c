// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "cpu_pool.h"
#include "xrl.h"

static void run_packets(struct cpu_worker *w)
{
	uint32_t i;

	int fd = w->prog_fd ? w->prog_fd : w->pool->dp->prog_fd;

	for (i = 0; i < w->runs && !w->err && !w->pool->halt; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			.data_in = w->pkt.data,
			.data_size_in = w->pkt.len,
			.repeat = w->repeat,
		);

		if (bpf_prog_test_run_opts(fd, &opts))
			w->err = errno;
	}
}

static void *worker_main(void *arg)
{
	struct cpu_worker *w = arg;
	cpu_set_t cpus;

	CPU_ZERO(&cpus);
	CPU_SET(w->cpu, &cpus);
	if (pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus))
		w->err = EINVAL;
	for (;;) {
		pthread_barrier_wait(&w->pool->start);
		if (w->pool->stopping)
			return NULL;
		run_packets(w);
		pthread_barrier_wait(&w->pool->done);
	}
}

void cpu_pool_start(struct cpu_pool *pool, const struct xrl_datapath *dp)
{
	int i;

	if (libbpf_num_possible_cpus() < CPU_POOL_SIZE ||
	    sysconf(_SC_NPROCESSORS_ONLN) < CPU_POOL_SIZE)
		cr_skip_test("needs %d CPUs", CPU_POOL_SIZE);
	memset(pool, 0, sizeof(*pool));
	pool->dp = dp;
	cr_assert_eq(pthread_barrier_init(&pool->start, NULL,
					  CPU_POOL_SIZE + 1), 0);
	cr_assert_eq(pthread_barrier_init(&pool->done, NULL,
					  CPU_POOL_SIZE + 1), 0);
	for (i = 0; i < CPU_POOL_SIZE; i++) {
		pool->workers[i].cpu = i;
		pool->workers[i].pool = pool;
		cr_assert_eq(pthread_create(&pool->workers[i].thread, NULL,
					    worker_main, &pool->workers[i]), 0);
	}
}

void cpu_pool_begin(struct cpu_pool *pool)
{
	pool->halt = false;
	pthread_barrier_wait(&pool->start);
}

void cpu_pool_end(struct cpu_pool *pool, bool halt)
{
	int i;

	pool->halt = halt;
	pthread_barrier_wait(&pool->done);
	for (i = 0; i < CPU_POOL_SIZE; i++)
		cr_assert_eq(pool->workers[i].err, 0, "CPU %d: %s", i,
			     strerror(pool->workers[i].err));
}

void cpu_pool_round(struct cpu_pool *pool)
{
	cpu_pool_begin(pool);
	cpu_pool_end(pool, false);
}

void cpu_pool_stop(struct cpu_pool *pool)
{
	int i;

	if (!pool->dp)
		return;	/* never started */
	pool->stopping = true;
	pthread_barrier_wait(&pool->start);
	for (i = 0; i < CPU_POOL_SIZE; i++)
		pthread_join(pool->workers[i].thread, NULL);
	pthread_barrier_destroy(&pool->start);
	pthread_barrier_destroy(&pool->done);
	pool->dp = NULL;
}

void cpu_pool_passed(const struct cpu_pool *pool, uint64_t out[CPU_POOL_SIZE])
{
	int n_cpus = libbpf_num_possible_cpus();
	struct xrl_counter values[n_cpus];
	__u32 index = XRL_VERDICT_PASS;
	int i;

	cr_assert_eq(bpf_map_lookup_elem(pool->dp->stats_fd, &index, values), 0);
	for (i = 0; i < CPU_POOL_SIZE; i++)
		out[i] = values[i].packets;
}
