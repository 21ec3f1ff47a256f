// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * blocklist.c - loading a blocklist of 1,048,576 prefixes (issue 26: as
 * many as bpfilter's set, which it loads in 714 ms with batched updates):
 * the file read and parsed (blocklist.h), then the trie created and
 * filled (blocklists.h), each timed, and the whole against the goal.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "blocklist.h"
#include "blocklists.h"
#include "common.h"
#include "control.h"

#define LOAD_RUNS	5
#define LOAD_GOAL_MS	714.0
#define LIST_ENTRIES	XRL_BLOCKLIST_ENTRIES

/* A list of @n prefixes: IPv4 /24s from 1.0.0.0 on, then IPv6 /64s,
 * as feeds mix them (written to disk only, never sent). */
static int write_list(const char *path, unsigned n)
{
	FILE *f = fopen(path, "w");
	unsigned i, v4 = n / 2;

	if (!f)
		return -errno;
	fprintf(f, "# %u prefixes\n", n);
	for (i = 0; i < v4; i++)
		fprintf(f, "%u.%u.%u.0/24\n", 1 + (i >> 16), (i >> 8) & 0xff,
			i & 0xff);
	for (i = 0; i < n - v4; i++)
		fprintf(f, "2001:db8:%x:%x::/64\n", i >> 16, i & 0xffff);
	return fclose(f) ? -errno : 0;
}

static double cpu_ms(void)
{
	return bench_thread_cpu_ns() / 1e6;
}

/* One load: parse and fill times in ms of CPU, wall time of both. */
static int load_once(const char *path, double *parse, double *fill,
		     double *wall)
{
	struct xrl_blocklist_entries e;
	double t0 = cpu_ms(), w0 = bench_now_ns() / 1e6, t1;
	char err[512];
	int fd, ret;

	ret = xrl_blocklist_load(path, XRL_BLOCKLIST_ENTRIES, &e, err,
				 sizeof(err));
	if (ret) {
		bench_log("blocklist: %s", err);
		return ret;
	}
	t1 = cpu_ms();
	fd = xrl_blocklist_trie(&e, err, sizeof(err));
	*parse = t1 - t0;
	*fill = cpu_ms() - t1;
	*wall = bench_now_ns() / 1e6 - w0;
	xrl_blocklist_entries_free(&e);
	if (fd < 0) {
		bench_log("blocklist: %s", err);
		return fd;
	}
	close(fd);
	return 0;
}

int bench_blocklist(int argc, char **argv)
{
	double parse[LOAD_RUNS], fill[LOAD_RUNS], total[LOAD_RUNS], wall;
	struct bench_spread p, f, t;
	char path[64], value[256], spread[64], name[96];
	int runs = LOAD_RUNS, run, ret;

	if (argc > 1 && !strcmp(argv[1], "--quick"))
		runs = 1;
	snprintf(path, sizeof(path), "/tmp/xrl-bench%d-list.txt",
		 (int)getpid());
	ret = write_list(path, LIST_ENTRIES);
	for (run = 0; !ret && run < runs; run++) {
		ret = load_once(path, &parse[run], &fill[run], &wall);
		total[run] = parse[run] + fill[run];
	}
	unlink(path);
	if (ret)
		return ret;
	bench_spread_of(parse, runs, &p);
	bench_spread_of(fill, runs, &f);
	bench_spread_of(total, runs, &t);
	bench_spread_fmt(spread, sizeof(spread), &t, 0);
	snprintf(value, sizeof(value), "%s ms CPU: file read %.0f, trie "
		 "filled %.0f (last run %.0f ms wall)", spread, p.median,
		 f.median, wall);
	snprintf(name, sizeof(name), "blocklist load, %d prefixes",
		 LIST_ENTRIES);
	bench_row("control plane", name, value, "", "<= 714 ms (bpfilter, "
		  "issue 26)", bench_spread_verdict(&t, LOAD_GOAL_MS));
	return 0;
}
