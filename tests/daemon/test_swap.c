// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Policy swaps under load, the daemon killed under load, and the time a
 * 10,000-rule reload takes (reported, never asserted).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <criterion/criterion.h>
#include <criterion/logging.h>
#include "daemon.h"
#include "fixture.h"
#include "stats.h"

static struct daemon_env env;

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(swap, .init = setup, .fini = teardown, .timeout = 600);

/*
 * Swap consistency.
 *
 * N_SOURCES sources x_k = 198.18.10.(4k+1), each with a rule x_k/32 in
 * both policies; policy A denies x_k for even k and allows it for odd k,
 * policy B does the opposite: every source's verdict differs between
 * them. Both have the same CIDRs, so every rule keeps its id across the
 * swaps (the test checks it) and the per-rule counters tell which rule
 * judged a packet; the default rule allows, under id 0.
 *
 * One thread judges the sources round robin (BPF_PROG_TEST_RUN on the
 * pinned program) while the main thread has the daemon reload A, B, A...
 * Each packet gets a label, A or B, from its verdict. A packet is a MIX
 * when:
 *  1. the rule that judged it is not x_k/32 (its counter did not move by
 *     exactly one, in the column its verdict says): a rule set missing the
 *     rule, or holding another, judged it;
 *  2. no swap was in flight while it was judged, yet its label is not the
 *     policy last applied;
 *  3. during one swap, a packet shows the old policy after an earlier
 *     packet showed the new one: at that moment some sources were judged
 *     by the new rules and others by the old, which a one-step swap can
 *     never produce, and an update rule by rule would.
 * The main thread starts the next swap only after a whole round of
 * sources has been judged with no swap in flight, so rule 2 covers every
 * source after every swap.
 *
 * That the test can fail was checked: with xrl_policy_apply changed to
 * update the rules map in force rule by rule instead of swapping a new
 * one in, it saw 435 mixes ("old rules after new ones") in 2000 swaps.
 */
#define N_SOURCES	64
#define N_SWAPS		2000

struct judge {
	struct daemon_env *env;
	__u32 rule_id[N_SOURCES];
	struct packet pkt[N_SOURCES];
	atomic_uint requested;	/* swaps asked for (the main thread) */
	atomic_uint applied;	/* swaps answered by the daemon */
	atomic_ullong rounds_quiet;	/* whole rounds with no swap in flight */
	atomic_bool stop;
	/* Results, read once the thread is joined. */
	unsigned long long judged;
	unsigned long long mixed_rule, mixed_quiet, mixed_order;
	char first_mix[256];
};

/* Generation g (swaps applied) is policy A when even. */
static bool label_is_a(int k, int verdict)
{
	return (k % 2 == 0) == (verdict == XDP_DROP);
}

static void note_mix(struct judge *j, unsigned long long *count,
		     const char *what, int k)
{
	if (!j->mixed_rule && !j->mixed_quiet && !j->mixed_order)
		snprintf(j->first_mix, sizeof(j->first_mix),
			 "%s: source %d, packet %llu", what, k, j->judged);
	(*count)++;
}

static void *judge_thread(void *arg)
{
	struct xrl_rule_counters seen[N_SOURCES], now;
	struct judge *j = arg;
	unsigned int switched_in = ~0u;	/* swap whose new policy was seen */
	bool quiet_round = true;
	int k = 0;

	for (k = 0; k < N_SOURCES; k++)
		cr_assert_eq(xrl_rule_stats_read(&j->env->dp, j->rule_id[k],
						 &seen[k]), 0);
	k = 0;
	while (!atomic_load(&j->stop)) {
		unsigned int applied = atomic_load(&j->applied);
		unsigned int requested = atomic_load(&j->requested);
		LIBBPF_OPTS(bpf_test_run_opts, opts,
			.data_in = j->pkt[k].data,
			.data_size_in = j->pkt[k].len,
			.repeat = 1,
		);
		bool verdict_a, passed, in_flight;
		__u64 d_pass, d_drop;

		if (bpf_prog_test_run_opts(j->env->dp.prog_fd, &opts))
			break;
		/* Asked for before it is sent, so a swap that took effect
		 * before the packet was judged shows here as in flight. */
		in_flight = requested != applied ||
			    atomic_load(&j->requested) != applied;
		xrl_rule_stats_read(&j->env->dp, j->rule_id[k], &now);
		d_pass = now.outcome[XRL_RULE_PASSED].packets -
			 seen[k].outcome[XRL_RULE_PASSED].packets;
		d_drop = now.outcome[XRL_RULE_DROPPED].packets -
			 seen[k].outcome[XRL_RULE_DROPPED].packets;
		seen[k] = now;
		passed = opts.retval == XDP_PASS;
		verdict_a = label_is_a(k, opts.retval);

		if (!(passed ? d_pass == 1 && d_drop == 0 :
			       d_drop == 1 && d_pass == 0))
			note_mix(j, &j->mixed_rule, "judged by another rule", k);
		if (!in_flight && verdict_a != (applied % 2 == 0))
			note_mix(j, &j->mixed_quiet, "not the policy applied",
				 k);
		if (in_flight) {
			/* Old policy: generation applied; new: applied + 1. */
			bool is_new = verdict_a == ((applied + 1) % 2 == 0);

			if (is_new)
				switched_in = applied + 1;
			else if (switched_in == applied + 1)
				note_mix(j, &j->mixed_order,
					 "old rules after new ones", k);
		}
		quiet_round &= !in_flight;
		j->judged++;
		if (++k == N_SOURCES) {
			k = 0;
			if (quiet_round)
				atomic_fetch_add(&j->rounds_quiet, 1);
			quiet_round = true;
		}
	}
	return NULL;
}

static void write_swap_policy(const char *path, bool policy_a)
{
	size_t cap = N_SOURCES * 96 + 128, used = 0;
	char *yaml = malloc(cap);
	int k;

	cr_assert_not_null(yaml);
	used += snprintf(yaml + used, cap - used,
			 "default:\n  action: allow\nrules:\n");
	for (k = 0; k < N_SOURCES; k++)
		used += snprintf(yaml + used, cap - used,
				 "  - cidr: 198.18.10.%d/32\n    action: %s\n",
				 4 * k + 1,
				 (k % 2 == 0) == policy_a ? "deny" : "allow");
	env_write(&env, path, yaml);
	free(yaml);
}

static void rule_ids(__u32 ids[N_SOURCES])
{
	json_t *list = request_ok(&env, "{\"cmd\":\"rule.list\"}"), *rule;
	char cidr[32];
	size_t i;
	int k;

	for (k = 0; k < N_SOURCES; k++) {
		snprintf(cidr, sizeof(cidr), "198.18.10.%d/32", 4 * k + 1);
		ids[k] = 0;
		json_array_foreach(json_object_get(list, "rules"), i, rule)
			if (!strcmp(json_string_value(json_object_get(rule,
					"cidr")), cidr))
				ids[k] = json_integer_value(
					json_object_get(rule, "id"));
		cr_assert_neq(ids[k], 0, "no rule for %s", cidr);
	}
	json_decref(list);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

Test(swap, every_verdict_is_one_whole_policy_or_the_other)
{
	char path_a[PATH_MAX], path_b[PATH_MAX];
	static struct judge j;
	__u32 ids_b[N_SOURCES];
	unsigned int swap;
	unsigned long long rounds;
	pthread_t thread;
	double start;
	int k;

	snprintf(path_a, sizeof(path_a), "%s/a.yaml", env.dir);
	snprintf(path_b, sizeof(path_b), "%s/b.yaml", env.dir);
	write_swap_policy(path_a, true);
	write_swap_policy(path_b, false);
	write_swap_policy(env.config, true);
	daemon_start(&env, NULL);
	j.env = &env;
	rule_ids(j.rule_id);
	for (k = 0; k < N_SOURCES; k++) {
		char src[32];

		snprintf(src, sizeof(src), "198.18.10.%d", 4 * k + 1);
		cr_assert_eq(packet_from(&j.pkt[k], src), 0);
	}

	cr_assert_eq(pthread_create(&thread, NULL, judge_thread, &j), 0);
	start = now_s();
	for (swap = 1; swap <= N_SWAPS; swap++) {
		rounds = atomic_load(&j.rounds_quiet);
		/* Wait for a whole quiet round under the policy in force. */
		while (atomic_load(&j.rounds_quiet) < rounds + 2)
			sched_yield();
		atomic_store(&j.requested, swap);
		json_decref(request_ok(&env, "{\"cmd\":\"reload\",\"path\":"
				       "\"%s\"}", swap % 2 ? path_b : path_a));
		atomic_store(&j.applied, swap);
	}
	rounds = atomic_load(&j.rounds_quiet);
	while (atomic_load(&j.rounds_quiet) < rounds + 2)
		sched_yield();
	atomic_store(&j.stop, true);
	pthread_join(thread, NULL);

	rule_ids(ids_b);
	for (k = 0; k < N_SOURCES; k++)
		cr_assert_eq(ids_b[k], j.rule_id[k], "rule ids kept");
	fprintf(stderr, "swap consistency: %llu verdicts judged, %u swaps "
		"made in %.1f s, mixed verdicts seen: %llu (another rule %llu, "
		"not the applied policy %llu, old after new %llu)\n",
		j.judged, N_SWAPS, now_s() - start,
		j.mixed_rule + j.mixed_quiet + j.mixed_order, j.mixed_rule,
		j.mixed_quiet, j.mixed_order);
	cr_assert_gt(j.judged, (unsigned long long)N_SWAPS * N_SOURCES * 2);
	cr_assert_eq(j.mixed_rule + j.mixed_quiet + j.mixed_order, 0,
		     "first mix: %s", j.first_mix);
}

/* A thread judging three sources over and over, counting wrong verdicts. */
struct traffic {
	struct daemon_env *env;
	struct packet denied, limited, allowed;
	atomic_ullong rounds;
	atomic_bool stop;
	unsigned long long wrong;
};

static int run_once(struct traffic *t, struct packet *pkt)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = pkt->data,
		.data_size_in = pkt->len,
		.repeat = 1,
	);

	if (bpf_prog_test_run_opts(t->env->dp.prog_fd, &opts))
		return -1;
	return opts.retval;
}

static void *traffic_thread(void *arg)
{
	struct traffic *t = arg;

	while (!atomic_load(&t->stop)) {
		/* The limited source spent its burst before: the clock
		 * stands still, so it stays over its limit. */
		t->wrong += run_once(t, &t->denied) != XDP_DROP;
		t->wrong += run_once(t, &t->limited) != XDP_DROP;
		t->wrong += run_once(t, &t->allowed) != XDP_PASS;
		atomic_fetch_add(&t->rounds, 1);
	}
	return NULL;
}

static void wait_rounds(struct traffic *t, unsigned long long n)
{
	unsigned long long start = atomic_load(&t->rounds);

	while (atomic_load(&t->rounds) < start + n)
		sched_yield();
}

Test(swap, sigkill_leaves_the_data_path_enforcing_and_a_restart_adopts_it)
{
	static struct traffic t = { .env = &env };
	pthread_t thread;
	json_t *list;
	int i, status;

	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: blocked\n    cidr: 198.18.20.0/24\n"
		  "    action: deny\n"
		  "  - name: limited\n    cidr: 198.18.21.0/24\n"
		  "    action: limit\n    pps: 10\n    burst: 5\n");
	daemon_start(&env, NULL);
	json_decref(request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			       "\"198.18.23.0/24\",\"name\":\"added\","
			       "\"action\":\"deny\"}"));
	cr_assert_eq(packet_from(&t.denied, "198.18.20.1"), 0);
	cr_assert_eq(packet_from(&t.limited, "198.18.21.1"), 0);
	cr_assert_eq(packet_from(&t.allowed, "198.18.22.1"), 0);
	for (i = 0; i < 5; i++)
		cr_assert_eq(fixture_run(&env.dp, &t.limited), XDP_PASS);

	cr_assert_eq(pthread_create(&thread, NULL, traffic_thread, &t), 0);
	wait_rounds(&t, 1000);
	status = daemon_stop(&env, SIGKILL);
	cr_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	wait_rounds(&t, 1000);		/* no daemon at all */
	daemon_start(&env, NULL);
	wait_rounds(&t, 1000);
	atomic_store(&t.stop, true);
	pthread_join(thread, NULL);
	cr_assert_eq(t.wrong, 0, "%llu wrong verdicts in %llu rounds", t.wrong,
		     (unsigned long long)t.rounds);

	/* The restarted daemon knows the policy in force, names and all,
	 * including the rule added through the socket. */
	cr_assert(log_contains(&env, "carrying on with the policy in force"),
		  "%s", daemon_log(&env));
	list = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	cr_assert_eq(json_array_size(json_object_get(list, "rules")), 4);
	cr_assert(strstr(json_dumps(list, 0), "\"name\": \"added\""));
	json_decref(list);
	json_decref(request_ok(&env, "{\"cmd\":\"rule.del\",\"rule\":"
			       "\"blocked\"}"));
	cr_assert_eq(fixture_run(&env.dp, &t.denied), XDP_PASS);
	cr_assert_eq(fixture_run(&env.dp, &t.limited), XDP_DROP,
		     "the bucket survived the restart and the change");
}

/* A policy of @n /32 rules in 198.18.0.0/15, each a limit. */
static void write_big_policy(const char *path, int n, int pps)
{
	size_t cap = (size_t)n * 100 + 128, used = 0;
	char *yaml = malloc(cap);
	int i;

	cr_assert_not_null(yaml);
	used += snprintf(yaml + used, cap - used,
			 "default:\n  action: allow\nrules:\n");
	for (i = 0; i < n; i++)
		used += snprintf(yaml + used, cap - used,
				 "  - cidr: 198.18.%d.%d/32\n    action: limit\n"
				 "    pps: %d\n    burst: 5\n",
				 i / 256, i % 256, pps);
	env_write(&env, path, yaml);
	free(yaml);
}

Test(swap, a_reload_of_ten_thousand_rules_is_timed)
{
	char path[PATH_MAX];
	struct packet pkt;
	double start, first, again, changed;
	json_t *resp;

	snprintf(path, sizeof(path), "%s/big.yaml", env.dir);
	write_big_policy(env.config, 1, 100);
	daemon_start(&env, NULL);

	write_big_policy(path, 10000, 100);
	start = now_s();
	resp = request_ok(&env, "{\"cmd\":\"reload\",\"path\":\"%s\"}", path);
	first = now_s() - start;
	cr_assert_eq(json_integer_value(json_object_get(resp, "rules")), 10001);
	json_decref(resp);

	start = now_s();
	json_decref(request_ok(&env, "{\"cmd\":\"reload\",\"path\":\"%s\"}",
			       path));
	again = now_s() - start;

	write_big_policy(path, 10000, 200);
	start = now_s();
	json_decref(request_ok(&env, "{\"cmd\":\"reload\",\"path\":\"%s\"}",
			       path));
	changed = now_s() - start;

	/* In force: the last source's rule is there, with its limit. */
	cr_assert_eq(packet_from(&pkt, "198.18.39.15"), 0);
	cr_assert_eq(fixture_run_many(&env.dp, &pkt, 8), 5);
	fprintf(stderr, "reload of 10,000 rules (request to answer): first "
		"%.3f s, same file again %.3f s, every rate changed %.3f s\n",
		first, again, changed);
}
