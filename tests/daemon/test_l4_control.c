// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * L4 rules through the daemon's socket (docs/POLICY.md "Protocols and
 * ports"): rule.add beside the plain rule of the same prefix, in force
 * at once for the data path; rule.list shows the match; refusals name
 * the field; rule.del takes the L4 rule by name and leaves the plain one.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <criterion/criterion.h>
#include <linux/bpf.h>
#include "daemon.h"
#include "fixture.h"

static struct daemon_env env;

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(l4_control, .init = setup, .fini = teardown, .timeout = 120);

static const char plain_policy[] =
	"default:\n"
	"  action: allow\n"
	"rules:\n"
	"  - name: lab\n"
	"    cidr: 198.18.3.0/24\n"
	"    action: allow\n";

/* A frame from @src: UDP to port 0 (packet_from), or a TCP ACK. */
static int judge(const char *src, bool tcp)
{
	struct packet_spec spec = { .src = src, .tcp = tcp };
	struct packet pkt;

	cr_assert_eq(packet_build(&pkt, &spec), 0);
	return fixture_run(&env.dp, &pkt);
}

static json_t *rule_named(json_t *resp, const char *name)
{
	json_t *rules = json_object_get(resp, "rules"), *rule;
	size_t i;

	json_array_foreach(rules, i, rule)
		if (!strcmp(json_string_value(json_object_get(rule, "name")),
			    name))
			return rule;
	return NULL;
}

Test(l4_control, an_l4_rule_added_at_runtime_takes_only_its_traffic)
{
	json_t *resp, *rule;
	const char *error;

	env_write(&env, NULL, plain_policy);
	daemon_start(&env, NULL);
	cr_assert_eq(judge("198.18.3.1", false), XDP_PASS);

	resp = request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			  "\"198.18.3.0/24\",\"proto\":\"udp\",\"dport\":"
			  "\"0-1023\",\"action\":\"deny\"}");
	rule = json_object_get(resp, "rule");
	cr_assert_str_eq(json_string_value(json_object_get(rule, "name")),
			 "198.18.3.0/24 udp dport 0-1023");
	cr_assert_str_eq(json_string_value(json_object_get(rule, "match")),
			 "udp dport 0-1023");
	json_decref(resp);
	cr_assert_eq(judge("198.18.3.1", false), XDP_DROP, "UDP to 0: denied");
	cr_assert_eq(judge("198.18.3.1", true), XDP_PASS, "TCP: the plain rule");

	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	cr_assert_not_null(rule_named(resp, "lab"));
	rule = rule_named(resp, "198.18.3.0/24 udp dport 0-1023");
	cr_assert_not_null(rule);
	cr_assert_str_eq(json_string_value(json_object_get(rule, "proto")),
			 "udp");
	cr_assert_str_eq(json_string_value(json_object_get(rule, "dport")),
			 "0-1023");
	json_decref(resp);

	error = request_fail(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			     "\"198.18.3.0/24\",\"proto\":\"udp\","
			     "\"tcp_flags\":\"syn\",\"action\":\"deny\"}");
	cr_assert(strstr(error, "tcp_flags: needs proto: tcp, not udp"),
		  "%s", error);
	error = request_fail(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			     "\"198.18.3.0/24\",\"proto\":\"tcp\","
			     "\"dport\":\"9-1\",\"action\":\"deny\"}");
	cr_assert(strstr(error, "dport: \"9-1\": range low end above its "
			 "high end"), "%s", error);
	error = request_fail(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			     "\"198.18.3.0/24\",\"proto\":\"udp\",\"dport\":"
			     "\"0-1023\",\"action\":\"deny\"}");
	cr_assert(strstr(error, "already exists"), "%s", error);

	/* By name: the L4 rule goes, the plain rule of the CIDR stays. */
	request_ok(&env, "{\"cmd\":\"rule.del\",\"rule\":"
		   "\"198.18.3.0/24 udp dport 0-1023\"}");
	cr_assert_eq(judge("198.18.3.1", false), XDP_PASS);
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	cr_assert_not_null(rule_named(resp, "lab"));
	cr_assert_null(rule_named(resp, "198.18.3.0/24 udp dport 0-1023"));
	json_decref(resp);
}

Test(l4_control, a_runtime_l4_rule_keeps_its_match_through_a_restart)
{
	json_t *resp, *rule;

	env_write(&env, NULL, plain_policy);
	daemon_start(&env, NULL);
	json_decref(request_ok(&env, "{\"cmd\":\"rule.add\",\"cidr\":"
			       "\"198.18.3.0/24\",\"proto\":\"udp\",\"dport\":"
			       "\"0-1023\",\"action\":\"deny\"}"));
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	cr_assert_eq(judge("198.18.3.1", false), XDP_DROP, "UDP to 0: denied");
	cr_assert_eq(judge("198.18.3.1", true), XDP_PASS, "TCP: the plain rule");
	resp = request_ok(&env, "{\"cmd\":\"rule.list\"}");
	rule = rule_named(resp, "198.18.3.0/24 udp dport 0-1023");
	cr_assert_not_null(rule);
	cr_assert_str_eq(json_string_value(json_object_get(rule, "match")),
			 "udp dport 0-1023");
	cr_assert_not_null(rule_named(resp, "lab"));
	json_decref(resp);
}
