// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xrl-bench - the benchmark driver called by scripts/bench/run. Each
 * command prints rows of the results table on stdout and its progress
 * on stderr.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include "aggregate.h"
#include "coarse_clock.h"
#include "control.h"
#include "micro.h"
#include "scrape.h"
#include "sync.h"
#include "veth.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{ "micro", bench_micro, "BPF_PROG_TEST_RUN: limiter vs reference" },
	{ "control", bench_control, "policy swap times" },
	{ "blocklist", bench_blocklist, "blocklist load, 1048576 prefixes" },
	{ "clock", bench_clock, "coarse clock accuracy, simulated" },
	{ "attach", bench_attach, "veth: attach a program to the receiver" },
	{ "gen", bench_gen, "veth: flood the receiver for a fixed time" },
	{ "scrape", bench_scrape, "/metrics: collect and format 1000 rules" },
	{ "aggregate", bench_aggregate,
	  "aggregate budget per CPU vs one shared CAS bucket" },
	{ "sync", bench_sync, "global budgets: one sync against Redis" },
};

#define N_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	return level == LIBBPF_WARN ? vfprintf(stderr, fmt, ap) : 0;
}

static void usage(void)
{
	size_t i;

	fprintf(stderr, "usage: xrl-bench COMMAND [OPTIONS]\n");
	for (i = 0; i < N_COMMANDS; i++)
		fprintf(stderr, "  %-8s %s\n", commands[i].name,
			commands[i].help);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage();
		return EXIT_FAILURE;
	}
	libbpf_set_print(quiet_libbpf);
	for (i = 0; i < N_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1) ?
				EXIT_FAILURE : EXIT_SUCCESS;
	fprintf(stderr, "xrl-bench: unknown command '%s'\n", argv[1]);
	usage();
	return EXIT_FAILURE;
}
