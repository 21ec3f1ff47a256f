// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A policy compiled whole (compiled.h): the rule table, the classifier
 * entries (chains of one prefix, levels, split markers, the meta), the
 * settings, the "since" carried by an id, and the shares of an
 * aggregate budget, all as the data path will write them. No root, no
 * BPF.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include "compiled.h"
#include "limit.h"
#include "policy.h"
#include "policy_read.h"
#include "policy_text.h"
#include "share.h"

/* One rule of each kind; comments give each rule's index (= its id). */
static const char policy_text[] =
	"keys: {ipv4_prefix: 24, ipv6_prefix: 64}\n"
	"rules:\n"
	"  - name: web\n"				/* 1 */
	"    cidr: 198.18.0.0/16\n"
	"    pps: 100\n"
	"    burst: 200\n"
	"    ban: 1m\n"
	"    ban_after: 5s\n"
	"    levels:\n"
	"      - {prefix: 20, pps: 1k, burst: 1k}\n"
	"  - name: syn\n"				/* 2 */
	"    cidr: 198.18.0.0/16\n"
	"    proto: tcp\n"
	"    tcp_flags: syn\n"
	"    pps: 10\n"
	"    burst: 10\n"
	"  - {name: host, cidr: 198.18.5.7/32, action: deny}\n"	/* 3 */
	"  - name: pace\n"				/* 4 */
	"    cidr: 198.19.1.0/24\n"
	"    strategy: leaky_bucket\n"
	"    interval: 100ms\n"
	"  - name: window\n"				/* 5 */
	"    cidr: fd00::/48\n"
	"    strategy: sliding_window\n"
	"    limit: 50\n"
	"    window: 1s\n"
	"  - {name: all, cidr: 203.0.113.0/24, scope: aggregate, pps: 1k,\n"
	"     burst: 1k}\n"				/* 6 */
	"  - {name: copy, cidr: 203.0.114.0/24, scope: aggregate, pps: 1k,\n"
	"     burst: 1k}\n";				/* 7 */

static struct xrl_config config;
static struct xrl_compiled compiled;
static char err[256];

static void compile_with(const struct xrl_compile_input *in)
{
	cr_assert_eq(policy_load(policy_text, &config), 0, "%s", policy_err);
	cr_assert_eq(xrl_policy_compile(&config.policy, in, &compiled, err,
					sizeof(err)), 0, "%s", err);
}

static void compile_fresh(void)
{
	struct xrl_compile_input in = { .gen = 5, .max_sources = 300000,
					.n_cpus = 4 };

	compile_with(&in);
}

static void free_all(void)
{
	xrl_compiled_free(&compiled);
	xrl_config_free(&config);
}

/* The classifier key of IPv4 @a.@b.@c.@d/@len (@family may carry
 * XRL_KEY_SPLIT), in the parser's layout: ::ffff:a.b.c.d. */
static struct xrl_rule_key v4_key(__u8 family, unsigned len, unsigned a,
				  unsigned b, unsigned c, unsigned d)
{
	struct xrl_rule_key key = { .family = family, .prefixlen = len };

	key.addr[2] = htonl(0xffff);
	key.addr[3] = htonl(a << 24 | b << 16 | c << 8 | d);
	return key;
}

/* The value of the classifier entry of @key, or NULL. */
static const union xrl_classifier_value *
entry_of(const struct xrl_rule_key *key)
{
	size_t i;

	for (i = 0; i < compiled.n; i++)
		if (!memcmp(&compiled.keys[i], key, sizeof(*key)))
			return &compiled.values[i];
	return NULL;
}

/* A compiled limit admits its rate or at most 1/4096 below it, never
 * above (include/xrl.h, struct xrl_limit). */
static void rate_is(const struct xrl_limit *limit, double rate)
{
	double admitted = xrl_limit_rate(limit);

	cr_assert_leq(admitted, rate);
	cr_assert_geq(admitted, rate * (1 - 1.0 / 4096), "%f for %f",
		      admitted, rate);
}

TestSuite(compiled, .init = compile_fresh, .fini = free_all);

Test(compiled, the_table_holds_each_rule_in_policy_order_by_its_id)
{
	size_t i;

	cr_assert_eq(compiled.n_rules, 8);
	cr_assert_eq(compiled.max_id, 7);
	for (i = 0; i < compiled.n_rules; i++) {
		cr_assert_eq(compiled.ids[i], i);
		cr_assert_eq(compiled.rules[i].id, i);
		cr_assert_eq(compiled.rules[i].gen, 5);
		cr_assert_eq(compiled.rules[i].since, 5, "no rule in force");
		cr_assert_eq(compiled.prefixes[i].prefixlen,
			     config.policy.rules[i].prefix.prefixlen);
	}
	cr_assert_eq(compiled.rules[0].action, XRL_ACTION_ALLOW);
	cr_assert_eq(compiled.rules[3].action, XRL_ACTION_DENY);
	cr_assert_eq(compiled.prefixes[1].prefixlen, 96 + 16);
}

Test(compiled, a_token_bucket_rule_has_its_limit_and_its_ban)
{
	const struct xrl_rule *web = &compiled.rules[1];
	const struct xrl_limit *pkt = &web->limit[XRL_LIMIT_PACKETS];

	cr_assert_eq(web->action, XRL_ACTION_LIMIT);
	cr_assert_eq(web->scope, XRL_SCOPE_SOURCE);
	cr_assert_eq(web->window.strategy, XRL_STRATEGY_TOKEN_BUCKET);
	/* 100 pps: one packet every 10 ms, 200 of them at once. */
	rate_is(pkt, 100);
	cr_assert_eq(pkt->tolerance, 200 * pkt->interval);
	cr_assert_eq(web->limit[XRL_LIMIT_BYTES].interval, 0);
	cr_assert_eq(web->ban.duration_ns, 60000000000ULL);
	cr_assert_eq(web->ban.after_ns, 5000000000ULL);
	cr_assert_eq(web->ban.max_ns, 8 * 60000000000ULL);
}

Test(compiled, a_level_is_an_entry_keyed_by_the_rule_id)
{
	const struct xrl_rule *web = &compiled.rules[1];
	struct xrl_rule_key key = { .family = XRL_KEY_LEVEL, .prefixlen = 0,
				    .addr = { 1 } };
	const union xrl_classifier_value *level;

	cr_assert_eq(web->levels.count, 1);
	cr_assert_eq(web->levels.prefix[0], 20);
	cr_assert_eq(web->levels.ipv6, 0);
	cr_assert_eq(memcmp(&compiled.keys[compiled.levels_at[1]], &key,
			    sizeof(key)), 0);
	level = entry_of(&key);
	cr_assert_not_null(level);
	cr_assert_eq(level->rule.id, 1);
	cr_assert_eq(level->rule.gen, 5);
	cr_assert_eq(level->rule.since, 5);
	/* 1k pps for the /20 together. */
	rate_is(&level->rule.limit[XRL_LIMIT_PACKETS], 1000);
	cr_assert_eq(level->rule.limit[XRL_LIMIT_PACKETS].tolerance,
		     1000 * level->rule.limit[XRL_LIMIT_PACKETS].interval);
	cr_assert_eq(compiled.rules[2].levels.count, 0);
}

Test(compiled, the_classifier_holds_the_l4_rule_first_and_chains_the_plain)
{
	struct xrl_rule_key key = v4_key(XRL_FAMILY_IPV4, 16, 198, 18, 0, 0);
	const union xrl_classifier_value *head = entry_of(&key);

	cr_assert_not_null(head);
	cr_assert_eq(head->rule.id, 2, "the syn rule");
	cr_assert_eq(head->rule.match.proto, IPPROTO_TCP);
	cr_assert_eq(head->rule.match.flags, XRL_MATCH_SYN);
	cr_assert_eq(head->rule.match.next, 1 + 1, "then web");
	cr_assert_eq(compiled.rules[2].match.next, 1 + 1);
	cr_assert_eq(compiled.rules[1].match.next, 0, "plain: last");
}

Test(compiled, a_rule_longer_than_the_key_marks_its_key_subnet_split)
{
	struct xrl_rule_key host = v4_key(XRL_FAMILY_IPV4, 32, 198, 18, 5, 7);
	struct xrl_rule_key split = v4_key(XRL_KEY_SPLIT | XRL_FAMILY_IPV4, 24,
					   198, 18, 5, 0);
	const union xrl_classifier_value *marker = entry_of(&split);

	cr_assert_not_null(entry_of(&host));
	cr_assert_eq(entry_of(&host)->rule.id, 3);
	cr_assert_not_null(marker);
	cr_assert_eq(marker->rule.gen, 5);
	cr_assert_eq(marker->rule.id, 0);
}

Test(compiled, the_meta_is_last_with_the_lengths_of_each_family)
{
	const struct xrl_policy_meta *meta;

	/* 7 keys of rules (two rules share one), a level, a split marker
	 * and the meta. */
	cr_assert_eq(compiled.n, 10);
	cr_assert_eq(compiled.keys[compiled.n - 1].family, XRL_KEY_META);
	meta = &compiled.values[compiled.n - 1].meta;
	cr_assert_eq(meta->gen, 5);
	cr_assert_eq(meta->v4_lengths, 1ULL << 16 | 1ULL << 24 | 1ULL << 32);
	cr_assert_eq(meta->v6_lengths[0], 1ULL << 48);
	cr_assert_eq(meta->v6_lengths[1], 0);
	cr_assert_eq(meta->long_rules, 1 | XRL_META_L4);
}

Test(compiled, strategies_compile_to_their_pace_and_window)
{
	const struct xrl_rule *pace = &compiled.rules[4];
	const struct xrl_rule *window = &compiled.rules[5];

	cr_assert_eq(pace->window.strategy, XRL_STRATEGY_LEAKY_BUCKET);
	rate_is(&pace->limit[XRL_LIMIT_PACKETS], 10);
	cr_assert_eq(pace->limit[XRL_LIMIT_PACKETS].tolerance,
		     pace->limit[XRL_LIMIT_PACKETS].interval, "a burst of 1");
	cr_assert_eq(window->window.strategy, XRL_STRATEGY_SLIDING_WINDOW);
	cr_assert_eq(window->window.limit, 50);
	cr_assert_eq(window->window.window_ns, 1000000000ULL);
	cr_assert_eq(window->window.sub_ns,
		     (1000000000ULL + XRL_WINDOW_SUBS - 1) / XRL_WINDOW_SUBS);
	/* The fallback's pace: 50 a second, evenly. */
	rate_is(&window->limit[XRL_LIMIT_PACKETS], 50);
}

Test(compiled, rules_of_the_same_numbers_differ_by_their_id_only)
{
	struct xrl_rule copy = compiled.rules[7];

	cr_assert_eq(compiled.rules[6].scope, XRL_SCOPE_AGGREGATE);
	cr_assert_eq(copy.id, 7);
	copy.id = 6;
	cr_assert_eq(memcmp(&copy, &compiled.rules[6], sizeof(copy)), 0);
	cr_assert_eq(compiled.rules[6].ban.duration_ns, 0,
		     "an aggregate has no source to ban");
}

Test(compiled, the_settings_are_the_policy_heads)
{
	struct xrl_settings wanted;

	cr_assert_eq(compiled.settings.v4_prefix, 24);
	cr_assert_eq(compiled.settings.v6_prefix, 64);
	cr_assert_eq(compiled.settings.v4_mask, htonl(0xffffff00));
	xrl_policy_settings(&config.policy, 300000, 4, &wanted);
	cr_assert_eq(memcmp(&compiled.settings, &wanted, sizeof(wanted)), 0);
}

Test(compiled, an_id_keeps_its_since_while_it_names_the_same_rule)
{
	struct xrl_installed_rule in_force[3] = {
		[1] = { .since = 3 },		/* web, as it is */
		[2] = { .since = 2 },		/* another prefix */
	};
	struct xrl_compile_input in = { .gen = 9, .in_force = in_force,
					.n_in_force = 3, .max_sources = 1000,
					.n_cpus = 1 };
	struct xrl_rule_key level_key = { .family = XRL_KEY_LEVEL,
					  .addr = { 1 } };

	free_all();
	cr_assert_eq(policy_load(policy_text, &config), 0, "%s", policy_err);
	in_force[1].prefix = config.policy.rules[1].prefix;
	in_force[2].prefix = config.policy.rules[3].prefix;
	in_force[2].match = config.policy.rules[2].match;
	xrl_config_free(&config);
	compile_with(&in);
	cr_assert_eq(compiled.rules[1].since, 3);
	cr_assert_eq(entry_of(&level_key)->rule.since, 3, "its level too");
	cr_assert_eq(compiled.rules[2].since, 9, "the id's prefix changed");
	cr_assert_eq(compiled.rules[3].since, 9, "the id held nothing");
	cr_assert_eq(compiled.rules[1].gen, 9);
}

Test(compiled, a_rule_that_does_not_compile_is_named)
{
	struct xrl_policy policy;
	struct xrl_rule_spec rule = { .name = "bad", .pps = 5, .burst = 0 };
	struct xrl_compile_input in = { .gen = 1, .n_cpus = 1 };
	struct xrl_compiled out;

	cr_assert_eq(xrl_policy_init(&policy), 0);
	rule.prefix.prefixlen = 96 + 8;
	rule.prefix.addr[10] = rule.prefix.addr[11] = 0xff;
	rule.prefix.addr[12] = 10;
	cr_assert_eq(xrl_policy_add(&policy, &rule), 0);
	cr_assert_eq(xrl_policy_compile(&policy, &in, &out, err, sizeof(err)),
		     -EINVAL);
	cr_assert_str_eq(err, "rule bad (10.0.0.0/8): Invalid argument");
	cr_assert_null(out.rules, "nothing left to free");
	xrl_policy_free(&policy);
}

Test(compiled, aggregate_shares_are_their_weights_of_the_budget)
{
	struct xrl_budget_limits limits = { .pps = 1000, .burst = 1000 };
	uint32_t weights[3] = { XRL_SHARE_ONE / 2, XRL_SHARE_ONE / 4, 0 };
	struct xrl_agg_share shares[3];

	cr_assert_eq(xrl_agg_shares_compile(&limits, weights, 3,
					    XRL_SHARE_ONE / 4, shares), 0);
	rate_is(&shares[0].limit[XRL_LIMIT_PACKETS], 500);
	rate_is(&shares[1].limit[XRL_LIMIT_PACKETS], 250);
	/* A zero weight is one unit: a CPU without a share fails open. */
	cr_assert_neq(shares[2].limit[XRL_LIMIT_PACKETS].interval, 0);
	rate_is(&shares[2].pool[XRL_LIMIT_PACKETS], 250);
	cr_assert_eq(memcmp(shares[0].pool, shares[2].pool,
			    sizeof(shares[0].pool)), 0);
	cr_assert_eq(shares[0].limit[XRL_LIMIT_BYTES].interval, 0,
		     "no byte limit");
}

/* ---- swaps that keep the rules' generation, and those that move it --- */

/* policy_text with @from replaced by @to (NULL: as it is), compiled at
 * generation 5 over policy_text installed at generation 4; the rules in
 * force are @base's. */
static void compile_edit(const char *from, const char *to,
			 struct xrl_compiled *base, struct xrl_compiled *out)
{
	struct xrl_compile_input first = { .gen = 4, .max_sources = 1000,
					   .n_cpus = 1 };
	struct xrl_installed_rule in_force[16] = { 0 };
	struct xrl_compile_input in = { .gen = 5, .in_force = in_force,
					.n_in_force = 16, .rules_gen = 4,
					.max_sources = 1000, .n_cpus = 1 };
	char text[sizeof(policy_text) + 256];
	struct xrl_config edited;
	const char *at;
	size_t i;

	cr_assert_eq(policy_load(policy_text, &edited), 0, "%s", policy_err);
	cr_assert_eq(xrl_policy_compile(&edited.policy, &first, base, err,
					sizeof(err)), 0, "%s", err);
	xrl_config_free(&edited);
	for (i = 0; i < base->n_rules; i++)
		xrl_installed_rule_set(&in_force[base->ids[i]],
				       &base->prefixes[i], &base->rules[i],
				       base->fingerprints[i]);
	in.n_rules_in_force = base->n_rules;
	snprintf(text, sizeof(text), "%s", policy_text);
	if (from) {
		at = strstr(policy_text, from);
		cr_assert_not_null(at, "%s", from);
		snprintf(text, sizeof(text), "%.*s%s%s",
			 (int)(at - policy_text), policy_text, to,
			 at + strlen(from));
	}
	cr_assert_eq(policy_load(text, &edited), 0, "%s: %s -> %s", policy_err,
		     from, to);
	cr_assert_eq(xrl_policy_compile(&edited.policy, &in, out, err,
					sizeof(err)), 0, "%s", err);
	xrl_config_free(&edited);
}

/* How many rules of @out have another fingerprint than in @base. */
static size_t rules_changed(const struct xrl_compiled *base,
			    const struct xrl_compiled *out)
{
	size_t i, changed = 0;

	for (i = 0; i < out->n_rules && i < base->n_rules; i++)
		changed += out->fingerprints[i] != base->fingerprints[i];
	return changed;
}

static void expect_kept(const char *from, const char *to, size_t changed)
{
	struct xrl_compiled base, out;
	size_t i;

	compile_edit(from, to, &base, &out);
	cr_assert_not(out.reshaped, "%s -> %s reshaped", from, to);
	cr_assert_eq(out.rules_gen, 4, "%s -> %s", from, to);
	cr_assert_eq(out.gen, 5, "the head's is new");
	for (i = 0; i < out.n_rules; i++)
		cr_assert_eq(out.rules[i].gen, 4);
	for (i = 0; i < out.n; i++)
		cr_assert_eq(out.keys[i].family == XRL_KEY_META ?
			     out.values[i].meta.gen : out.values[i].rule.gen,
			     out.keys[i].family == XRL_KEY_META ? 5 : 4,
			     "entry %zu", i);
	cr_assert_eq(rules_changed(&base, &out), changed, "%s -> %s", from,
		     to);
	xrl_compiled_free(&base);
	xrl_compiled_free(&out);
}

static void expect_reshaped(const char *from, const char *to)
{
	struct xrl_compiled base, out;
	size_t i;

	compile_edit(from, to, &base, &out);
	cr_assert(out.reshaped, "%s -> %s kept the shape", from, to);
	cr_assert_eq(out.rules_gen, 5);
	for (i = 0; i < out.n_rules; i++)
		cr_assert_eq(out.rules[i].gen, 5);
	for (i = 0; i < out.n; i++)
		cr_assert_eq(out.keys[i].family == XRL_KEY_META ?
			     out.values[i].meta.gen : out.values[i].rule.gen,
			     5, "entry %zu", i);
	xrl_compiled_free(&base);
	xrl_compiled_free(&out);
}

Test(compiled, a_swap_of_numbers_keeps_the_rules_generation)
{
	expect_kept(NULL, NULL, 0);
	expect_kept("    pps: 100\n", "    pps: 150\n", 1);
	expect_kept("    burst: 200\n", "    burst: 20\n", 1);
	expect_kept("ban: 1m\n", "ban: 2m\n", 1);
	expect_kept("{prefix: 20, pps: 1k, burst: 1k}",
		    "{prefix: 20, pps: 2k, burst: 1k}", 1);
	expect_kept("interval: 100ms", "interval: 50ms", 1);
	expect_kept("limit: 50", "limit: 60", 1);
	expect_kept("    pps: 10\n    burst: 10\n",
		    "    pps: 20\n    burst: 30\n", 1);
}

Test(compiled, a_swap_that_may_move_a_source_to_another_rule_reshapes)
{
	expect_reshaped("action: deny", "action: allow");
	expect_reshaped("strategy: leaky_bucket\n    interval: 100ms",
			"pps: 10\n    burst: 10");
	expect_reshaped("window: 1s", "window: 2s");
	expect_reshaped("{prefix: 20, pps: 1k", "{prefix: 22, pps: 1k");
	expect_reshaped("198.19.1.0/24", "198.19.2.0/24");
	expect_reshaped("    tcp_flags: syn\n", "");
	expect_reshaped("  - {name: all, cidr: 203.0.113.0/24, scope: "
			"aggregate", "  - {name: all, cidr: 203.0.113.0/24, "
			"scope: source");
	expect_reshaped("  - {name: copy, cidr: 203.0.114.0/24, scope: "
			"aggregate, pps: 1k,\n     burst: 1k}\n", "");
	expect_reshaped("  - name: syn\n", "  - {name: dns, cidr: 198.18.0.0/16, "
			"proto: udp, dport: 53, pps: 5, burst: 5}\n"
			"  - name: syn\n");
	expect_reshaped("rules:\n", "rules:\n  - {name: new, cidr: "
			"198.18.9.0/24, pps: 5, burst: 5}\n");
}
