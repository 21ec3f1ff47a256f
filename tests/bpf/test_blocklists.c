// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Blocklists (blocklists:; bpf/blocklists.h) through BPF_PROG_TEST_RUN: a
 * list of a million entries loaded whole, its sources dropped before the
 * rules and counted, others judged by the rules; IPv6 and CIDR entries;
 * a monitor list; a bad line refusing the whole list with the old one
 * still in force; one list swapped alone while the policy stays, and
 * under traffic, no packet judged by neither the old trie nor the new.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include "blocklists.h"
#include "cidr.h"
#include "loader.h"
#include "metrics.h"
#include "metrics_collect.h"
#include "policy_map.h"
#include "fixture.h"
#include "policy_running.h"
#include "stats.h"

static struct xrl_datapath dp;
static struct fixture_yaml fy;
static char list_path[64], other_path[64], yaml[1024];

static void setup(void)
{
	snprintf(list_path, sizeof(list_path), "/tmp/xrlt%d-drop.txt",
		 (int)getpid());
	snprintf(other_path, sizeof(other_path), "/tmp/xrlt%d-spam.txt",
		 (int)getpid());
	fixture_load(&dp, 0);
}

static void teardown(void)
{
	fixture_yaml_free(&fy);
	xrl_datapath_close(&dp);
	unlink(list_path);
	unlink(other_path);
}

TestSuite(blocklists, .init = setup, .fini = teardown, .timeout = 240);

/* A policy of a 100 pps default and the list at @path as "drop". */
static const char *policy_of(const char *action)
{
	snprintf(yaml, sizeof(yaml),
		 "default: {pps: 100, burst: 100}\n"
		 "blocklists:\n"
		 "  - {name: drop, file: %s, action: %s}\n", list_path, action);
	return yaml;
}

static int judge(const char *src)
{
	return fixture_run_from(&dp, src);
}

/* /metrics, as the daemon serves it, holds @line. */
static void assert_metric(const char *line)
{
	struct xrl_metrics m = { .tracked_sources = -1 };
	size_t len;
	char *text;

	cr_assert_eq(xrl_metrics_collect(&dp, &m), 0);
	cr_assert_eq(xrl_metrics_format(&m, &text, &len), 0);
	cr_assert_not_null(strstr(text, line), "no %s in:\n%s", line, text);
	free(text);
	free(m.rules);
}

static double ms_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (t1.tv_sec - t0->tv_sec) * 1e3 + (t1.tv_nsec - t0->tv_nsec) / 1e6;
}

/*
 * 1,000,000 lines: the even addresses of 198.18.0.0/15 (65,536) and
 * fd00::2, fd00::4 ... (934,464 of them), so every odd one is unlisted.
 */
static void write_million(const char *path)
{
	FILE *f = fopen(path, "w");
	unsigned i;

	cr_assert_not_null(f);
	fprintf(f, "# a million entries\n\n");
	for (i = 0; i < 65536; i++)
		fprintf(f, "198.%u.%u.%u\n", 18 + (i >> 15), (i >> 7) & 0xff,
			(i << 1) & 0xff);
	for (i = 1; i <= 934464; i++)
		fprintf(f, "fd00::%x:%x/128\n", (2 * i) >> 16, (2 * i) & 0xffff);
	cr_assert_eq(fclose(f), 0);
}

Test(blocklists, million_entries_denied_others_judged)
{
	struct xrl_blocklist_report lists[XRL_BLOCKLISTS_MAX];
	static const char *const listed[] = {
		"198.18.0.0", "198.18.0.2", "198.18.200.100", "198.19.255.254",
		"fd00::2", "fd00::1:0", "fd00::e:4280", "fd00::1c:8480",
	};
	static const char *const unlisted[] = {
		"198.18.0.1", "198.19.255.255", "198.20.0.2", "fd00::1",
		"fd00::1c:8482", "fd00::1:0:0", "fd01::2",
	};
	struct timespec t0;
	size_t i;

	write_million(list_path);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	fixture_yaml_apply(&dp, &fy, policy_of("deny"));
	cr_log_info("a policy of a 1,000,000-entry list applied in %.0f ms",
		    ms_since(&t0));
	for (i = 0; i < sizeof(listed) / sizeof(listed[0]); i++)
		cr_expect_eq(judge(listed[i]), XDP_DROP, "%s", listed[i]);
	for (i = 0; i < sizeof(unlisted) / sizeof(unlisted[0]); i++)
		cr_expect_eq(judge(unlisted[i]), XDP_PASS, "%s", unlisted[i]);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BLOCKLISTED), 8);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), 7);
	cr_assert_eq(xrl_blocklists_read(&dp, lists), 1);
	cr_assert_str_eq(lists[0].name, "drop");
	cr_assert_eq(lists[0].entries, 1000000);
	cr_assert_eq(lists[0].hits.packets, 8);
	cr_assert_eq(lists[0].action, XRL_BLOCKLIST_DENY);
	assert_metric("xdp_ratelimit_blocklist_entries{list=\"drop\"} "
		      "1000000\n");
	assert_metric("xdp_ratelimit_blocklist_capacity{list=\"drop\"} "
		      "1048576\n");
	assert_metric("xdp_ratelimit_blocklist_hits_total{list=\"drop\"} 8\n");
	assert_metric("xdp_ratelimit_packets_total{verdict=\"blocklisted\"} "
		      "8\n");
}

Test(blocklists, cidrs_of_both_families)
{
	fixture_write_file(list_path, "198.18.4.0/24   # a comment\n"
			      "\t fd00:1::/64\r\n"
			      "198.18.9.9\n#198.18.10.0/24\n");
	fixture_yaml_apply(&dp, &fy, policy_of("deny"));
	cr_assert_eq(judge("198.18.4.0"), XDP_DROP);
	cr_assert_eq(judge("198.18.4.255"), XDP_DROP);
	cr_assert_eq(judge("198.18.5.0"), XDP_PASS);
	cr_assert_eq(judge("fd00:1::ffff:1"), XDP_DROP);
	cr_assert_eq(judge("fd00:1:0:1::1"), XDP_PASS);
	cr_assert_eq(judge("198.18.9.9"), XDP_DROP);
	cr_assert_eq(judge("198.18.9.8"), XDP_PASS);
	cr_assert_eq(judge("198.18.10.1"), XDP_PASS, "a comment is no entry");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BLOCKLISTED), 4);
}

Test(blocklists, monitor_counts_then_the_rules_judge)
{
	struct xrl_blocklist_report lists[XRL_BLOCKLISTS_MAX];

	fixture_write_file(list_path, "198.18.4.0/24\n");
	fixture_yaml_apply(&dp, &fy, policy_of("monitor"));
	cr_assert_eq(judge("198.18.4.1"), XDP_PASS);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BLOCKLISTED), 0);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_PASS), 1);
	cr_assert_eq(xrl_blocklists_read(&dp, lists), 1);
	cr_assert_eq(lists[0].hits.packets, 1);
	cr_assert_eq(lists[0].action, XRL_BLOCKLIST_MONITOR);
}

Test(blocklists, no_list_no_lookup)
{
	struct xrl_settings settings;

	fixture_yaml_apply(&dp, &fy, "default: {pps: 100, burst: 100}\n");
	cr_assert_eq(xrl_datapath_settings(&dp, &settings), 0);
	cr_assert_eq(settings.blocklists, 0);
	cr_assert_eq(judge("198.18.4.1"), XDP_PASS);
}

/* A bad line refuses the whole file; the list in force stays. */
Test(blocklists, bad_line_keeps_the_list_in_force)
{
	struct xrl_config config;
	char err[512], want[256];

	fixture_write_file(list_path, "198.18.4.0/24\n");
	fixture_yaml_apply(&dp, &fy, policy_of("deny"));
	fixture_write_file(list_path, "198.18.5.0/24\n# fine\n1.2.3.4/33\n");
	cr_assert_eq(xrl_config_load_string(yaml, strlen(yaml), "t.yaml",
					    &config, err, sizeof(err)), 0);
	cr_assert_neq(xrl_policy_apply(&dp, &config.policy, err, sizeof(err)),
		      0);
	snprintf(want, sizeof(want), "blocklists: drop: %s:3: \"1.2.3.4/33\": "
		 "prefix longer than 32", list_path);
	cr_assert_str_eq(err, want);
	xrl_config_free(&config);
	cr_assert_eq(judge("198.18.4.1"), XDP_DROP, "the old list holds");
	cr_assert_eq(judge("198.18.5.1"), XDP_PASS, "the new one never came");
}

/* A copy of the running policy (a rule added) keeps the trie in force
 * without reading the file again. */
Test(blocklists, policy_change_keeps_the_trie)
{
	struct xrl_policy next;

	fixture_write_file(list_path, "198.18.4.0/24\n");
	fixture_yaml_apply(&dp, &fy, policy_of("deny"));
	cr_assert_eq(judge("198.18.4.2"), XDP_DROP);
	cr_assert_eq(xrl_policy_copy(&next, &fy.config.policy), 0);
	unlink(list_path);
	fixture_rule(&next, "198.18.8.0/24", XRL_ACTION_DENY, 0, 0, 0, 0);
	fixture_apply(&dp, &next);
	cr_assert_eq(judge("198.18.4.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.8.1"), XDP_DROP);
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BLOCKLISTED), 2);
	assert_metric("xdp_ratelimit_blocklist_hits_total{list=\"drop\"} 2\n");
	/* A reload (the file read again) keeps the list's count too. */
	fixture_write_file(list_path, "198.18.4.0/24\n");
	fixture_yaml_apply(&dp, &fy, policy_of("deny"));
	cr_assert_eq(judge("198.18.4.3"), XDP_DROP);
	assert_metric("xdp_ratelimit_blocklist_hits_total{list=\"drop\"} 3\n");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_DENY), 1);
	xrl_policy_free(&next);
	unlink(list_path);
}

/* One list swapped alone: the other list, the rules and their buckets
 * stay. */
Test(blocklists, one_list_swapped_alone)
{
	struct xrl_blocklist_report lists[XRL_BLOCKLISTS_MAX];
	struct xrl_blocklist_spec spec = {};
	struct xrl_settings before, after;
	char err[512];
	size_t n;
	int fd;

	fixture_write_file(list_path, "198.18.4.0/24\n");
	fixture_write_file(other_path, "198.18.6.0/24\n");
	snprintf(yaml, sizeof(yaml),
		 "default: {pps: 100, burst: 100}\n"
		 "blocklists:\n"
		 "  - {name: drop, file: %s}\n"
		 "  - {name: spam, file: %s}\n", list_path, other_path);
	fixture_yaml_apply(&dp, &fy, yaml);
	cr_assert_eq(judge("198.18.7.1"), XDP_PASS);
	cr_assert_eq(judge("198.18.6.1"), XDP_DROP, "a hit of spam's");
	cr_assert_eq(xrl_datapath_settings(&dp, &before), 0);

	fixture_write_file(other_path, "198.18.7.0/24\n");
	spec = fy.config.policy.blocklists[1];
	cr_assert_eq(xrl_blocklist_build(&spec, &fd, &n, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(n, 1);
	cr_assert_eq(xrl_blocklist_swap(&dp, 1, fd, err, sizeof(err)), 0,
		     "%s", err);
	close(fd);
	cr_assert_eq(xrl_datapath_settings(&dp, &after), 0);
	cr_assert_eq(memcmp(&before, &after, sizeof(before)), 0,
		     "the policy stays");
	cr_assert_eq(judge("198.18.7.1"), XDP_DROP);
	cr_assert_eq(judge("198.18.6.1"), XDP_PASS);
	cr_assert_eq(judge("198.18.4.1"), XDP_DROP);
	cr_assert_eq(xrl_blocklists_read(&dp, lists), 2);
	cr_assert_eq(lists[0].hits.packets, 1);
	cr_assert_eq(lists[1].hits.packets, 2, "its hits before the swap stay");
}

/*
 * Swaps under traffic: a source both the old and the new trie hold is
 * dropped by every frame, whichever trie it met, through 200 swaps
 * (fewer under emulation: fixture_scaled()).
 */
Test(blocklists, swap_under_traffic_judges_every_frame)
{
	struct xrl_blocklist_entries a = {}, b = {};
	struct xrl_lpm_key keys_a[2], keys_b[2];
	struct fixture_traffic t;
	char err[256];
	int fds[2], i, swaps = (int)fixture_scaled(200, 20);

	fixture_write_file(list_path, "198.18.4.0/24\n");
	fixture_yaml_apply(&dp, &fy, policy_of("deny"));
	cr_assert_eq(xrl_cidr_parse("198.18.4.0/24", &keys_a[0]), 0);
	cr_assert_eq(xrl_cidr_parse("198.18.5.0/24", &keys_a[1]), 0);
	cr_assert_eq(xrl_cidr_parse("198.18.4.7", &keys_b[0]), 0);
	cr_assert_eq(xrl_cidr_parse("198.18.6.0/24", &keys_b[1]), 0);
	a.keys = keys_a;
	a.n = 2;
	b.keys = keys_b;
	b.n = 2;
	fds[0] = xrl_blocklist_trie(&a, err, sizeof(err));
	fds[1] = xrl_blocklist_trie(&b, err, sizeof(err));
	cr_assert(fds[0] >= 0 && fds[1] >= 0, "%s", err);
	swaps &= ~1;	/* an even count: list b is in force last */
	fixture_traffic_start(&t, &dp, "198.18.4.7");
	for (i = 0; i < swaps; i++)
		cr_assert_eq(xrl_blocklist_swap(&dp, 0, fds[i % 2], err,
						sizeof(err)), 0, "%s", err);
	fixture_traffic_stop(&t);
	cr_log_info("%llu frames through %d swaps",
		    (unsigned long long)t.frames, swaps);
	cr_assert_gt(t.frames, 0);
	cr_assert_eq(t.dropped, t.frames, "every frame met a whole trie");
	cr_assert_eq(fixture_count(&dp, XRL_VERDICT_BLOCKLISTED), t.frames);
	cr_assert_eq(judge("198.18.6.1"), XDP_DROP, "list b in force last");
	cr_assert_eq(judge("198.18.5.1"), XDP_PASS, "list a swapped out");
	close(fds[0]);
	close(fds[1]);
}
