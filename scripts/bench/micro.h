/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * micro.h - the microbenchmarks (xrl-bench micro): a harness that runs
 * the limiter and a reference program side by side through
 * BPF_PROG_TEST_RUN (micro.c), and rows, each one function measuring one
 * thing (micro_limits.c, micro_features.c, micro_state.c,
 * micro_previous.c), chosen by name with --rows from the table in
 * micro.c, after the selftests' bench.h.
 */
#ifndef XRL_BENCH_MICRO_H
#define XRL_BENCH_MICRO_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>
#include "common.h"
#include "datapath.h"
#include "packet.h"

struct bpf_object;
struct prev_host;
struct ref_bpf;
struct verdict_bpf;
struct wrap_bpf;

/* xrl-bench micro: prints the microbenchmark rows. 0 or -errno. */
int bench_micro(int argc, char **argv);

#define ROTATING_SOURCES	1000000
#define MAX_RUNS		15
#define MAX_SIDES		12
#define MAX_VARIANTS		(MAX_SIDES - 1)

enum traffic {
	TRAFFIC_HOT,
	TRAFFIC_ROTATE,
	TRAFFIC_NEW,
	TRAFFICS,
};

struct traffic_spec {
	const char *name;
	const char *src;	/* the frame's source before the wrapper */
	__u32 n_sources;	/* wrap.bpf.c: 0 means never repeat */
	__u32 repeat;		/* packets per run */
};

/* The traffic of each case, and its key for --only. */
extern const struct traffic_spec traffics[TRAFFICS];
extern const char *const traffic_keys[TRAFFICS];

struct micro {
	struct ref_bpf *ref;
	struct ref_bpf *ref_coarse;
	/* The reference admitting every packet (an interval of 1 ns): what
	 * rows whose limiter admits are compared with, so that both sides
	 * write their bucket. */
	struct ref_bpf *ref_admitting;
	/* Both without a clock read (--clockless-reference): what the
	 * variants on the test clock are compared with. */
	struct ref_bpf *ref_frozen, *ref_admitting_frozen;
	bool clockless_reference;
	struct verdict_bpf *verdict;
	struct wrap_bpf *wrap[TRAFFICS];
	struct packet frame[TRAFFICS];
	struct xrl_datapath dp;		/* the limiter, production clock */
	struct xrl_datapath dp_clockless;	/* test clock: no clock read */
	int runs;
	__u32 repeat_div;		/* --quick: fewer packets per run */
	/* --variant FILE...: limiters built with a step removed */
	const char *variant_path[MAX_VARIANTS];
	struct bpf_object *variant[MAX_VARIANTS];
	struct xrl_datapath variant_dp[MAX_VARIANTS];
	int n_variants;
	const char *only;		/* --only: some of hot,rotate,new */
	size_t rules;			/* --rules: that many (the rules row) */
	const char *rows;		/* --rows: the rows run; NULL: all */
	const char *previous;		/* --previous: its host (prevhost.c) */
	bool previous_clockless;	/* --clockless: its test-clock path */
	bool budget;			/* --budget: variants' rules with it */
	bool admitting;			/* --admitting: variants' rules admit
					 * all, against ref_admitting */
};

struct side {
	int prog_fd;
	double ns;			/* median of @run_ns */
	double run_ns[MAX_RUNS];	/* one per run, in run order */
	int runs;
};

/* ---- the harness (micro.c) ------------------------------------------ */

/* Runs @prog_fd under the wrapper of traffic @t, @repeat packets. */
int micro_run_wrapped(struct micro *m, enum traffic t, int prog_fd,
		      __u32 repeat, double *ns);
__u32 micro_repeat_of(const struct micro *m, enum traffic t);
/* Measures @n programs over traffic @t, alternating between them run
 * after run; stores each one's median. */
int micro_side_by_side(struct micro *m, enum traffic t, struct side *sides,
		       int n);
/* The ratio of @side to @ref run by run, as a spread. */
void micro_ratio_spread(const struct side *side, const struct side *ref,
			struct bench_spread *out);
/* A row for @side against @ref (with a @limit > 0, the goal @target). */
void micro_row_vs(const char *bench, const char *name,
		  const struct side *side, const struct side *ref,
		  const char *target, double limit);
/* The reference the variants are compared with (--admitting,
 * --clockless-reference). */
struct ref_bpf *micro_reference(const struct micro *m);

void micro_row_ns(const char *name, const struct side *side,
		  const struct side *ref, const char *target, double limit);
/* Brings the tables to the state traffic @t measures. */
int micro_warm(struct micro *m, enum traffic t, int prog_fd);
/* The goal of issue 11 for traffic @t with @n_rules rules. */
double micro_goal_of(enum traffic t, size_t n_rules, char *target,
		     size_t len);

/* ---- the rows: 0 or -errno, rows of the table on stdout ------------- */

/* micro_limits.c: the limiter's own path. */
int micro_floor(struct micro *m);
int micro_rules(struct micro *m, size_t n_rules);
int micro_budget(struct micro *m);
int micro_window(struct micro *m);
int micro_clocks(struct micro *m);
/* micro_features.c: what a rule may add. */
int micro_levels(struct micro *m);
int micro_l4(struct micro *m);
int micro_bans(struct micro *m);
/* One hot source over its limit: the default rule at 1 pps, burst 1,
 * with ban: 30d when @ban. */
int micro_apply_over_limit(struct xrl_datapath *dp, bool ban);
/* micro_capture.c: a capture running at its bound. */
int micro_capture(struct micro *m);
int micro_escalate(struct micro *m);
/* micro_state.c: what the limiter holds, and reading it. */
int micro_memory(struct micro *m);
/* Kernel memory per CPU with 1,000 rules, here and at 64 and 128 CPUs. */
int micro_cpu_memory(struct micro *m);
/* Kernel memory of a map (fdinfo memlock), and its max_entries. */
int micro_map_memlock(int fd, unsigned long long *memlock,
		      unsigned long long *max_entries);
int micro_readout(struct micro *m);
/* micro_previous.c: against the previous data path, and variants of
 * the limiter with a step removed (--previous, --variant). */
int micro_previous(struct micro *m);
int micro_variants(struct micro *m, size_t n_rules,
		   const struct prev_host *host);
int micro_variants_previous(struct micro *m, size_t n_rules);
/* Loads the variant built into @path, a data path of its own in @dp. */
int micro_load_variant(const char *path, struct bpf_object **objp,
		       struct xrl_datapath *dp);

#endif
