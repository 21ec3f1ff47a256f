// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * prevhost.c - holds a previous commit's data path for `xrl-bench micro
 * --previous` (scripts/bench/previous). Built by that script against the
 * previous commit's own headers and library, never against this tree's:
 * the maps' layouts differ between the two, and only the library of a
 * commit can fill its program's maps.
 *
 * It loads that commit's program twice (the production clock, and the
 * test clock as micro's clockless row does), says so on stdout, and
 * applies the benchmark policies the driver asks for on stdin, one
 * command a line, each answered "ok" or "error ...":
 *
 *   ready PID PROG_FD BUCKETS_FD CLOCKLESS_PROG_FD COMMIT
 *   rules N        N limit rules, no new-source budget (as micro's rows)
 *   budget         1 rule and the default new-source budget
 *   clockless N    N rules on the test-clock data path
 *
 * The driver takes the fds with pidfd_getfd(2), so both programs run in
 * its own process, under its own wrapper, alternating run by run. It
 * ends at end of input. Only the calls this commit and its predecessors
 * share are used: xrl_datapath_load() and bench_apply_rules().
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "datapath.h"
/* Since 53ac253 the loader has its own header; d61c380 has it in datapath.h. */
#if __has_include("loader.h")
#include "loader.h"
#endif
#include "rules.h"

#ifndef XRL_PREV_COMMIT
#define XRL_PREV_COMMIT "unknown"
#endif

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

/* One command line; 0 or -errno. */
static int serve(struct xrl_datapath *dp, struct xrl_datapath *clockless,
		 const char *line)
{
	unsigned long n;

	if (sscanf(line, "rules %lu", &n) == 1)
		return bench_apply_rules(dp, n, false);
	if (sscanf(line, "clockless %lu", &n) == 1)
		return bench_apply_rules(clockless, n, false);
	if (!strcmp(line, "budget\n"))
		return bench_apply_rules(dp, 1, true);
	return -EINVAL;
}

int main(void)
{
	struct xrl_load_opts test_clock = { .max_sources = 1024,
					    .test_clock = true };
	struct xrl_datapath dp, clockless;
	char line[128];
	int ret;

	libbpf_set_print(quiet_libbpf);
	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = xrl_datapath_load(&dp, NULL);
	if (ret) {
		fprintf(stderr, "prevhost: loading: %s\n", strerror(-ret));
		return EXIT_FAILURE;
	}
	ret = xrl_datapath_load(&clockless, &test_clock);
	if (ret) {
		fprintf(stderr, "prevhost: loading (test clock): %s\n",
			strerror(-ret));
		goto close_dp;
	}
	printf("ready %d %d %d %d %s\n", (int)getpid(), dp.prog_fd,
	       dp.buckets_fd, clockless.prog_fd, XRL_PREV_COMMIT);
	while (fgets(line, sizeof(line), stdin)) {
		ret = serve(&dp, &clockless, line);
		if (ret)
			printf("error %s\n", strerror(-ret));
		else
			printf("ok\n");
	}
	ret = 0;
	xrl_datapath_close(&clockless);
close_dp:
	xrl_datapath_close(&dp);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
