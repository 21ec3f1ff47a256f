// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Rule ids as an operator meets them: a rule added after another was
 * deleted starts with zero counters and a bucket of its own, whatever ids
 * came and went before, through restarts of the daemon and through
 * `attach --policy` of the CLI; and after the ids wrap, a reused id
 * brings nothing of its past with it.
 *
 * Packets are judged here with BPF_PROG_TEST_RUN against the pinned data
 * path the daemon adopted, all at one instant of the test clock, so
 * every pass and drop is exact.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include "cidr.h"
#include "daemon.h"
#include "rulemaps.h"
#include "fixture.h"
#include "topo.h"

static struct daemon_env env;
static struct topo topo;
static bool have_topo;
static char out[16384];

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\n");
}

static void teardown(void)
{
	env_teardown(&env);
	if (have_topo)
		topo_destroy(&topo);
}

TestSuite(ids, .init = setup, .fini = teardown, .timeout = 120);

static int cli(const char *args)
{
	return env_cli(&env, out, sizeof(out), args, true);
}

/* Judges @n packets from @src now; returns how many passed. */
static uint64_t offer(const char *src, uint32_t n)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0);
	return fixture_run_many(&env.dp, &pkt, n);
}

/* The id, passed and dropped counts the CLI prints for rule @name. */
struct listed {
	long id, passed, dropped;
};

static struct listed listed_rule(const char *name)
{
	struct listed l = { -1, -1, -1 };
	char want[80], *line;

	cr_assert_eq(cli("rule list"), 0, "%s", out);
	snprintf(want, sizeof(want), " %s ", name);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		if (!strstr(line, want))
			continue;
		l.id = strtol(line, NULL, 10);
		cr_assert(sscanf(strstr(line, "(passed"),
				 "(passed %ld, dropped %ld)", &l.passed,
				 &l.dropped) == 2,
			  "%s", line);
		return l;
	}
	cr_assert_fail("rule %s not listed", name);
	return l;
}

Test(ids, add_del_add_with_traffic_between_gives_fresh_counters_and_bucket)
{
	struct listed a, b, c;

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule add 198.18.160.0/24 --name A --action limit "
			 "--pps 1 --burst 10"),
		     0, "%s", out);
	cr_assert_eq(offer("198.18.160.5", 50), 10);
	a = listed_rule("A");
	cr_assert_eq(a.passed, 10);
	cr_assert_eq(a.dropped, 40);

	cr_assert_eq(cli("rule del A"), 0, "%s", out);
	cr_assert_eq(cli("rule add 198.18.160.0/24 --name B --action limit "
			 "--pps 1000 --burst 100"),
		     0, "%s", out);
	cr_assert(strstr(out, "(passed 0, dropped 0)"), "fresh: %s", out);
	b = listed_rule("B");
	cr_assert_gt(b.id, a.id, "B got id %ld, A had %ld", b.id, a.id);
	/* The source A had in debt meets B's own full bucket. */
	cr_assert_eq(offer("198.18.160.5", 100), 100);
	b = listed_rule("B");
	cr_assert_eq(b.passed, 100);
	cr_assert_eq(b.dropped, 0);

	/* The highest id goes, the daemon restarts: the next rule still
	 * gets an id never used. */
	cr_assert_eq(cli("rule del B"), 0, "%s", out);
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule add 198.18.160.0/24 --name C --action deny"), 0,
		     "%s", out);
	c = listed_rule("C");
	cr_assert_gt(c.id, b.id, "C got id %ld, B had %ld", c.id, b.id);
	cr_assert_eq(c.passed, 0);
	cr_assert_eq(c.dropped, 0);
	cr_assert_eq(offer("198.18.160.5", 3), 0);
	cr_assert_eq(listed_rule("C").dropped, 3);
}

/* The id of the rule for @cidr in force, read from the pinned map. */
static uint32_t id_in_force(const char *cidr)
{
	struct xrl_lpm_key key;
	struct xrl_rule_key rule_key;
	struct xrl_rule rule;
	int fd;

	cr_assert_eq(xrl_cidr_parse(cidr, &key), 0);
	fd = xrl_datapath_rules_fd(&env.dp);
	cr_assert_geq(fd, 0);
	/* The classifier is keyed by struct xrl_rule_key. */
	xrl_rule_key_of(&key, &rule_key);
	cr_assert_eq(bpf_map_lookup_elem(fd, &rule_key, &rule), 0, "%s", cidr);
	close(fd);
	return rule.id;
}

/* `xdp-ratelimit attach IFACE --policy FILE` in the topology's receiving
 * namespace, on the env's pins; returns the exit code. */
static int cli_in_ns(const char *args)
{
	char command[PATH_MAX * 3];
	size_t got;
	FILE *pipe;

	snprintf(
		command, sizeof(command),
		"nsenter --net=/run/netns/%s build/xdp-ratelimit -P %s %s 2>&1",
		topo.ns_rx, env.pin_dir, args);
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	got = fread(out, 1, sizeof(out) - 1, pipe);
	out[got] = '\0';
	return WEXITSTATUS(pclose(pipe));
}

static void attach_policy(const char *yaml)
{
	char path[PATH_MAX], args[PATH_MAX + 64];

	snprintf(path, sizeof(path), "%s/attach.yaml", env.dir);
	env_write(&env, path, yaml);
	snprintf(args, sizeof(args), "attach %s --policy %s", topo.if_rx, path);
	cr_assert_eq(cli_in_ns(args), 0, "%s", out);
}

Test(ids, attach_policy_carries_ids_by_prefix_not_by_position)
{
	uint32_t web, db, web2, db2, extra;
	struct xrl_rule_counters counters;
	char args[64];

	topo_create(&topo);
	have_topo = true;
	env.netns = topo.ns_rx;

	attach_policy("default:\n  action: allow\nrules:\n"
		      "  - name: web\n    cidr: 198.18.161.0/24\n"
		      "    action: limit\n    pps: 1\n    burst: 4\n"
		      "  - name: db\n    cidr: 198.18.162.0/24\n"
		      "    action: deny\n");
	web = id_in_force("198.18.161.0/24");
	db = id_in_force("198.18.162.0/24");
	cr_assert_eq(offer("198.18.161.9", 10), 4);

	/* The same rules in the other order, and one more. */
	attach_policy("default:\n  action: allow\nrules:\n"
		      "  - name: extra\n    cidr: 198.18.163.0/24\n"
		      "    action: deny\n"
		      "  - name: db\n    cidr: 198.18.162.0/24\n"
		      "    action: deny\n"
		      "  - name: web\n    cidr: 198.18.161.0/24\n"
		      "    action: limit\n    pps: 1\n    burst: 4\n");
	web2 = id_in_force("198.18.161.0/24");
	db2 = id_in_force("198.18.162.0/24");
	extra = id_in_force("198.18.163.0/24");
	cr_assert_eq(web2, web);
	cr_assert_eq(db2, db);
	cr_assert(extra != web && extra != db && extra > web && extra > db,
		  "extra got %u (web %u, db %u)", extra, web, db);
	counters = fixture_rule_counters(&env.dp, web);
	cr_assert_eq(counters.outcome[XRL_RULE_PASSED].packets, 4);
	cr_assert_eq(counters.outcome[XRL_RULE_DROPPED].packets, 6);
	/* web's bucket stayed with it: still empty at this instant. */
	cr_assert_eq(offer("198.18.161.9", 1), 0);
	counters = fixture_rule_counters(&env.dp, extra);
	cr_assert_eq(counters.outcome[XRL_RULE_DROPPED].packets, 0);

	/* The daemon, started over what the CLI applied, goes on from the
	 * same mark. */
	env_write(&env, NULL, "default:\n  action: allow\n");
	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule add 198.18.164.0/24 --name later --action "
			 "deny"),
		     0, "%s", out);
	cr_assert_gt(id_in_force("198.18.164.0/24"), extra);
	/* The last detach is refused under a daemon on these pins. */
	daemon_stop(&env, SIGTERM);
	snprintf(args, sizeof(args), "detach %s", topo.if_rx);
	cr_assert_eq(cli_in_ns(args), 0, "%s", out);
}

/* Sets the pinned id mark, as if that many ids had been handed out. */
static void set_mark(uint32_t next_id)
{
	char path[PATH_MAX + 16];
	__u32 zero = 0, value[2] = { next_id, 0 };
	int fd;

	snprintf(path, sizeof(path), "%s/%s", env.pin_dir, XRL_PIN_IDS);
	fd = bpf_obj_get(path);
	cr_assert_geq(fd, 0, "%s", path);
	cr_assert_eq(bpf_map_update_elem(fd, &zero, value, 0), 0);
	close(fd);
}

Test(ids, after_the_ids_wrap_a_reused_id_has_no_counters_and_no_bucket)
{
	struct listed old, reused;

	daemon_start(&env, NULL);
	cr_assert_eq(cli("rule add 198.18.165.0/24 --name old --action limit "
			 "--pps 1 --burst 10"),
		     0, "%s", out);
	cr_assert_eq(offer("198.18.165.5", 50), 10);
	old = listed_rule("old");
	cr_assert_eq(old.dropped, 40);
	cr_assert_eq(cli("rule del old"), 0, "%s", out);

	/* Two ids left before the wrap (ids are below the data path's id
	 * limit, twice its rule capacity): the third new rule takes the
	 * lowest free one again, the one "old" had. */
	set_mark(xrl_rule_id_limit(&env.dp) - 2);
	cr_assert_eq(cli("rule add 198.18.170.0/24 --action deny"), 0, "%s",
		     out);
	cr_assert_eq(cli("rule add 198.18.171.0/24 --action deny"), 0, "%s",
		     out);
	cr_assert_eq(cli("rule add 198.18.165.0/24 --name reused --action "
			 "limit --pps 1000 --burst 100"),
		     0, "%s", out);
	reused = listed_rule("reused");
	cr_assert_eq(reused.id, old.id, "the wrap reuses id %ld (got %ld)",
		     old.id, reused.id);
	cr_assert_eq(reused.passed, 0);
	cr_assert_eq(reused.dropped, 0);
	/* The bucket "old" left for 198.18.165.5 under that id is gone:
	 * the source meets a full bucket of the new rule. */
	cr_assert_eq(offer("198.18.165.5", 100), 100);
	reused = listed_rule("reused");
	cr_assert_eq(reused.passed, 100);
	cr_assert_eq(reused.dropped, 0);
}
