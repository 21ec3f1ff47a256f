// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include "bucket.h"
#include "cidr.h"
#include "limit.h"
#include "fixture.h"
#include "loader.h"
#include "policy_map.h"
#include "rule.h"
#include "stats.h"

uint64_t fixture_scaled(uint64_t n, uint64_t least)
{
	const char *text = getenv("XRL_TEST_SCALE");
	double scale = text && *text ? strtod(text, NULL) : 1;
	uint64_t scaled;

	if (!(scale > 0) || scale >= 1)
		return n;
	scaled = (uint64_t)(n * scale + 0.5);
	return scaled > least ? scaled : (least < n ? least : n);
}

void fixture_load(struct xrl_datapath *dp, uint32_t max_sources)
{
	struct xrl_load_opts opts = {
		.max_sources = max_sources,
		.test_clock = true,
		.hash_seed = FIXTURE_HASH_SEED,
	};
	int ret = xrl_datapath_load(dp, &opts);

	cr_assert_eq(ret, 0, "loading the data path: %s", strerror(-ret));
	xrl_datapath_set_time(dp, NS_PER_S);
}

void fixture_apply(struct xrl_datapath *dp, const struct xrl_policy *policy)
{
	char err[256] = "";
	int ret = xrl_policy_apply(dp, policy, err, sizeof(err));

	cr_assert_eq(ret, 0, "applying the policy: %s", err);
}

void fixture_yaml_apply(struct xrl_datapath *dp, struct fixture_yaml *fy,
			const char *yaml)
{
	char err[512];

	fixture_yaml_free(fy);
	cr_assert_eq(xrl_config_load_string(yaml, strlen(yaml), "t.yaml",
					    &fy->config, err, sizeof(err)), 0,
		     "%s", err);
	fy->loaded = true;
	fixture_apply(dp, &fy->config.policy);
}

uint32_t fixture_yaml_rule_id(struct fixture_yaml *fy, const char *name)
{
	struct xrl_rule_spec *rule = xrl_policy_find(&fy->config.policy, name);

	cr_assert_not_null(rule, "no rule %s", name);
	return rule->id;
}

void fixture_yaml_free(struct fixture_yaml *fy)
{
	if (fy->loaded)
		xrl_config_free(&fy->config);
	fy->loaded = false;
}

uint32_t fixture_rule(struct xrl_policy *policy, const char *cidr,
		  enum xrl_action action, uint64_t pps, uint64_t burst,
		  uint64_t bps, uint64_t burst_bytes)
{
	struct xrl_rule_spec rule = {
		.action = action,
		.pps = pps,
		.burst = burst,
		.bps = bps,
		.burst_bytes = burst_bytes,
	};

	return fixture_rule_spec(policy, cidr, rule);
}

uint32_t fixture_rule_spec(struct xrl_policy *policy, const char *cidr,
			   struct xrl_rule_spec rule)
{
	char err[160];
	int ret;

	if (!cidr) {
		rule.prefix = policy->rules[0].prefix;
		memcpy(rule.name, policy->rules[0].name, sizeof(rule.name));
		rule.id = policy->rules[0].id;
		policy->rules[0] = rule;
		cr_assert_eq(xrl_rule_check(&rule, err, sizeof(err)), 0, "%s", err);
		return rule.id;
	}
	snprintf(rule.name, sizeof(rule.name), "%s", cidr);
	ret = xrl_cidr_parse(cidr, &rule.prefix);
	cr_assert_eq(ret, 0, "cidr %s: %s", cidr, strerror(-ret));
	cr_assert_eq(xrl_rule_check(&rule, err, sizeof(err)), 0, "%s: %s",
		     cidr, err);
	ret = xrl_policy_add(policy, &rule);
	cr_assert_eq(ret, 0, "adding %s: %s", cidr, strerror(-ret));
	return policy->rules[policy->n_rules - 1].id;
}

static int test_run(struct xrl_datapath *dp, const struct packet *pkt,
		    uint32_t repeat)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = pkt->data,
		.data_size_in = pkt->len,
		.repeat = repeat,
	);
	int ret;

	cr_assert_gt(repeat, 0);
	ret = bpf_prog_test_run_opts(dp->prog_fd, &opts);
	cr_assert_eq(ret, 0, "test run: %s", strerror(errno));
	return opts.retval;
}

/*
 * A test run with repeat > 1 makes the kernel switch the XDP dispatcher
 * to the program and back, which costs about a millisecond: a few runs
 * are cheaper one by one.
 */
#define REPEAT_CHEAPER_FROM 64

int fixture_offer(struct xrl_datapath *dp, const struct packet *pkt,
		  uint32_t repeat)
{
	int verdict = -1;

	if (repeat >= REPEAT_CHEAPER_FROM)
		return test_run(dp, pkt, repeat);
	while (repeat--)
		verdict = test_run(dp, pkt, 1);
	return verdict;
}

/*
 * BPF_PROG_TEST_RUN wants at least an Ethernet header of data. A shorter
 * frame is passed as those bytes with data_end before them: the kernel
 * puts what lies past data_end in a fragment, which a program without
 * frags support never sees.
 */
int fixture_run_prefix(struct xrl_datapath *dp, const struct packet *pkt,
		       size_t len)
{
	struct xdp_md ctx = { .data_end = len };
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = pkt->data,
		.data_size_in = len < ETH_HLEN ? ETH_HLEN : len,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = 1,
	);
	int ret;

	cr_assert_leq(len, PACKET_MAX);
	ret = bpf_prog_test_run_opts(dp->prog_fd, &opts);
	cr_assert_eq(ret, 0, "test run of %zu bytes: %s", len, strerror(errno));
	return opts.retval;
}

int fixture_run_on(struct xrl_datapath *dp, const struct packet *pkt,
		   int ifindex)
{
	struct xdp_md ctx = {
		.data_end = pkt->len,
		.ingress_ifindex = ifindex,
	};
	LIBBPF_OPTS(bpf_test_run_opts, opts,
		.data_in = pkt->data,
		.data_size_in = pkt->len,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = 1,
	);
	int ret;

	ret = bpf_prog_test_run_opts(dp->prog_fd, &opts);
	cr_assert_eq(ret, 0, "test run on ifindex %d: %s", ifindex,
		     strerror(errno));
	return opts.retval;
}

int fixture_run(struct xrl_datapath *dp, const struct packet *pkt)
{
	return test_run(dp, pkt, 1);
}

static uint64_t passed_total(struct xrl_datapath *dp)
{
	return fixture_count(dp, XRL_VERDICT_PASS) +
	       fixture_count(dp, XRL_VERDICT_MONITOR) +
	       fixture_count(dp, XRL_VERDICT_ALLOW) +
	       fixture_count(dp, XRL_VERDICT_NONIP);
}

uint64_t fixture_run_many(struct xrl_datapath *dp, const struct packet *pkt,
			  uint32_t repeat)
{
	uint64_t before = passed_total(dp);

	fixture_offer(dp, pkt, repeat);
	return passed_total(dp) - before;
}

uint64_t fixture_count(struct xrl_datapath *dp, enum xrl_verdict verdict)
{
	struct xrl_counter totals[XRL_VERDICT_COUNT];
	int ret = xrl_stats_read(dp, totals);

	cr_assert_eq(ret, 0, "reading counters: %s", strerror(-ret));
	return totals[verdict].packets;
}

struct xrl_rule_counters fixture_rule_counters(struct xrl_datapath *dp,
					       uint32_t rule_id)
{
	struct xrl_rule_counters totals;
	int ret = xrl_rule_stats_read(dp, rule_id, &totals);

	cr_assert_eq(ret, 0, "reading counters of rule %u: %s", rule_id,
		     strerror(-ret));
	return totals;
}

struct xrl_table_counters fixture_table_counters(struct xrl_datapath *dp)
{
	struct xrl_table_counters c;
	int ret = xrl_table_stats_read(dp, &c);

	cr_assert_eq(ret, 0, "reading table counters: %s", strerror(-ret));
	return c;
}

/* The bucket of @key, if it is bound to @rule_id. */
static int bucket_of_rule(struct xrl_datapath *dp,
			  const struct xrl_bucket_key *key, uint32_t rule_id,
			  struct xrl_bucket *out)
{
	if (bpf_map_lookup_elem(dp->buckets_fd, key, out))
		return -errno;
	return XRL_BUCKET_RULE(out->rule_id) == rule_id ? 0 : -ENOENT;
}

/* The offender record of @key, if it is @rule_id's. */
static int offender_of_rule(struct xrl_datapath *dp,
			    const struct xrl_bucket_key *key, uint32_t rule_id,
			    struct xrl_offender *out)
{
	int ret = xrl_offender_read(dp, key, out);

	if (ret)
		return ret;
	return out->rule_id == rule_id ? 0 : -ENOENT;
}

/* The key of @key_addr's bucket, untagged but for the family. */
static void key_of_text(const char *key_addr, struct xrl_bucket_key *key)
{
	struct in_addr v4;

	memset(key, 0, sizeof(*key));
	key->tag = XRL_FAMILY_IPV6;
	if (inet_pton(AF_INET, key_addr, &v4) == 1) {
		key->tag = XRL_FAMILY_IPV4;
		key->addr[10] = key->addr[11] = 0xff;
		memcpy(key->addr + 12, &v4, sizeof(v4));
	} else {
		cr_assert_eq(inet_pton(AF_INET6, key_addr, key->addr), 1,
			     "bucket address %s", key_addr);
	}
}

int fixture_level_bucket(struct xrl_datapath *dp, const char *key_addr,
			 uint32_t rule_id, unsigned level,
			 struct xrl_bucket *out)
{
	struct xrl_bucket_key key;

	key_of_text(key_addr, &key);
	key.tag = XRL_LEVEL_TAG(key.tag, rule_id, level);
	return bucket_of_rule(dp, &key, rule_id, out);
}

void fixture_level_bucket_write(struct xrl_datapath *dp, const char *key_addr,
				uint32_t rule_id, unsigned level,
				const struct xrl_bucket *bucket)
{
	struct xrl_bucket_key key;

	key_of_text(key_addr, &key);
	key.tag = XRL_LEVEL_TAG(key.tag, rule_id, level);
	cr_assert_eq(bpf_map_update_elem(dp->buckets_fd, &key, bucket, BPF_EXIST),
		     0, "writing the level bucket of %s: %s", key_addr,
		     strerror(errno));
}

void fixture_bucket_write(struct xrl_datapath *dp, const char *key_addr,
			  const struct xrl_bucket *bucket)
{
	struct xrl_bucket_key key;

	key_of_text(key_addr, &key);
	cr_assert_eq(bpf_map_update_elem(dp->buckets_fd, &key, bucket, BPF_EXIST),
		     0, "writing the bucket of %s: %s", key_addr,
		     strerror(errno));
}

int fixture_bucket(struct xrl_datapath *dp, const char *key_addr,
		   uint32_t rule_id, struct xrl_bucket *out)
{
	struct xrl_bucket_key key;

	key_of_text(key_addr, &key);
	/* A plain key, or one of a split subnet (include/xrl.h). */
	if (!bucket_of_rule(dp, &key, rule_id, out))
		return 0;
	key.tag |= (rule_id + 1) << XRL_TAG_SPLIT_SHIFT;
	return bucket_of_rule(dp, &key, rule_id, out);
}

int fixture_offender(struct xrl_datapath *dp, const char *key_addr,
		     uint32_t rule_id, struct xrl_offender *out)
{
	struct xrl_bucket_key key;

	key_of_text(key_addr, &key);
	if (!offender_of_rule(dp, &key, rule_id, out))
		return 0;
	key.tag |= (rule_id + 1) << XRL_TAG_SPLIT_SHIFT;
	return offender_of_rule(dp, &key, rule_id, out);
}

int fixture_level_offender(struct xrl_datapath *dp, const char *key_addr,
			   uint32_t rule_id, unsigned level,
			   struct xrl_offender *out)
{
	struct xrl_bucket_key key;

	key_of_text(key_addr, &key);
	key.tag = XRL_LEVEL_TAG(key.tag, rule_id, level);
	return offender_of_rule(dp, &key, rule_id, out);
}

struct fixture_counts fixture_source_counts(struct xrl_datapath *dp,
					    const char *key_addr,
					    uint32_t rule_id)
{
	struct fixture_counts counts = { 0 };
	struct xrl_offender off;
	struct xrl_bucket bucket;

	cr_assert_eq(fixture_bucket(dp, key_addr, rule_id, &bucket), 0,
		     "no bucket of rule %u keyed %s", rule_id, key_addr);
	counts.flags = bucket.rule_id & XRL_BUCKET_FLAGS;
	if (fixture_offender(dp, key_addr, rule_id, &off))
		return counts;
	counts.refused = true;
	counts.passed = off.passed;
	counts.dropped = off.dropped;
	counts.ban_until_ns = off.ban_until_ns;
	return counts;
}

uint64_t fixture_packets_owed(const struct xrl_bucket *bucket, uint64_t pps,
			      uint64_t burst, uint64_t now_ns)
{
	struct xrl_bucket_level level;
	struct xrl_limit limit;

	cr_assert_eq(xrl_limit_compile_pps(pps, burst, &limit), 0);
	xrl_bucket_level(&limit, bucket->tat[XRL_LIMIT_PACKETS], now_ns,
			 &level);
	cr_assert(level.known, "the bucket's word is in other units");
	return (uint64_t)(level.burst - level.tokens + 0.5);
}

int fixture_run_from(struct xrl_datapath *dp, const char *src)
{
	struct packet pkt;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	return fixture_run(dp, &pkt);
}

unsigned fixture_passes(struct xrl_datapath *dp, const char *src, unsigned n)
{
	struct packet pkt;
	unsigned passed = 0;

	cr_assert_eq(packet_from(&pkt, src), 0, "%s", src);
	while (n--)
		passed += fixture_run(dp, &pkt) == XDP_PASS;
	return passed;
}

static void *traffic_thread(void *arg)
{
	struct fixture_traffic *t = arg;
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = t->pkt.data,
		    .data_size_in = (__u32)t->pkt.len, .repeat = 1);

	while (!atomic_load(&t->stop)) {
		if (bpf_prog_test_run_opts(t->dp->prog_fd, &opts))
			break;
		t->frames++;
		t->dropped += opts.retval == XDP_DROP;
	}
	return NULL;
}

void fixture_traffic_start(struct fixture_traffic *t, struct xrl_datapath *dp,
			   const char *src)
{
	memset(t, 0, sizeof(*t));
	t->dp = dp;
	cr_assert_eq(packet_from(&t->pkt, src), 0, "%s", src);
	cr_assert_eq(pthread_create(&t->thread, NULL, traffic_thread, t), 0);
}

void fixture_traffic_stop(struct fixture_traffic *t)
{
	atomic_store(&t->stop, true);
	pthread_join(t->thread, NULL);
}

void fixture_write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	cr_assert_eq(fclose(f), 0, "%s", path);
}
