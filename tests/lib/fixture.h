/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fixture.h - a data path loaded with the test clock, and packets judged
 * through BPF_PROG_TEST_RUN.
 */
#ifndef XRL_TEST_FIXTURE_H
#define XRL_TEST_FIXTURE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdbool.h>
#include "datapath.h"
#include "packet.h"
#include "policy.h"
#include "policy_read.h"

#define NS_PER_S 1000000000ULL
/* The prefix fallback's hash seed in tests: fixed, so runs repeat. */
#define FIXTURE_HASH_SEED 0x5eed5eed5eed5eedULL

/* @n scaled by $XRL_TEST_SCALE (a number, default 1), at least @least:
 * the packets, rounds or swaps of a test that only needs volume. The
 * kernel runner (scripts/kernels) sets it below 1 under emulation. */
uint64_t fixture_scaled(uint64_t n, uint64_t least);

/* Loads the program with the test clock at 1 s and a fixed hash seed;
 * criterion fails on error. */
void fixture_load(struct xrl_datapath *dp, uint32_t max_sources);

/* Applies @policy; criterion fails on error. */
void fixture_apply(struct xrl_datapath *dp, const struct xrl_policy *policy);

/* A policy file's text put in force: the config it was loaded into is
 * kept, to look its rules up by name. */
struct fixture_yaml {
	struct xrl_config config;
	bool loaded;
};

/* Loads @yaml through the policy file loader (as "t.yaml") and applies
 * it, replacing what @fy held; criterion fails on error. */
void fixture_yaml_apply(struct xrl_datapath *dp, struct fixture_yaml *fy,
			const char *yaml);

/* The id of the rule named @name in force through @fy. */
uint32_t fixture_yaml_rule_id(struct fixture_yaml *fy, const char *name);

void fixture_yaml_free(struct fixture_yaml *fy);

/* A rule for @cidr (NULL: the default rule, updated in place); returns
 * the rule's id. */
uint32_t fixture_rule(struct xrl_policy *policy, const char *cidr,
		  enum xrl_action action, uint64_t pps, uint64_t burst,
		  uint64_t bps, uint64_t burst_bytes);

/* The same with every field of @rule set by the caller (strategy,
 * levels, bans, L4 match); its name and prefix come from @cidr. */
uint32_t fixture_rule_spec(struct xrl_policy *policy, const char *cidr,
			   struct xrl_rule_spec rule);

/* The table counters (xrl_table_stats), summed over CPUs. */
struct xrl_table_counters fixture_table_counters(struct xrl_datapath *dp);

/* Judges @pkt once; returns the XDP verdict. */
int fixture_run(struct xrl_datapath *dp, const struct packet *pkt);

/*
 * Traffic on a thread of its own while the test changes the data path:
 * a minimal packet from @src judged again and again until stopped,
 * every verdict counted.
 */
struct fixture_traffic {
	struct xrl_datapath *dp;
	struct packet pkt;
	pthread_t thread;
	atomic_bool stop;
	uint64_t frames, dropped;
};

void fixture_traffic_start(struct fixture_traffic *t, struct xrl_datapath *dp,
			   const char *src);
void fixture_traffic_stop(struct fixture_traffic *t);

/* Writes @text as the file @path; criterion fails on error. */
void fixture_write_file(const char *path, const char *text);

/* Judges a minimal packet from @src ("198.18.0.1", "fd00::1") once. */
int fixture_run_from(struct xrl_datapath *dp, const char *src);

/* How many of @n minimal packets from @src pass, one run each, now. */
unsigned fixture_passes(struct xrl_datapath *dp, const char *src, unsigned n);

/* Judges @pkt @repeat times at the current test time; returns how many
 * passed (from the program's pass + monitor + allow counters). */
uint64_t fixture_run_many(struct xrl_datapath *dp, const struct packet *pkt,
			  uint32_t repeat);

/* Judges @pkt @repeat times and returns the last XDP verdict, reading no
 * counter (for loops that count once at the end). */
int fixture_offer(struct xrl_datapath *dp, const struct packet *pkt,
		  uint32_t repeat);

/* Judges the first @len bytes of @pkt as a whole frame, even fewer than
 * an Ethernet header. */
int fixture_run_prefix(struct xrl_datapath *dp, const struct packet *pkt,
		       size_t len);

/* Judges @pkt once as received on @ifindex (in the caller's network
 * namespace), so that the program sees that device's MTU. */
int fixture_run_on(struct xrl_datapath *dp, const struct packet *pkt,
		   int ifindex);

/* Global counter of one verdict. */
uint64_t fixture_count(struct xrl_datapath *dp, enum xrl_verdict verdict);

/* Counters of rule @rule_id, summed over CPUs. */
struct xrl_rule_counters fixture_rule_counters(struct xrl_datapath *dp,
					       uint32_t rule_id);

/*
 * The bucket of (@key_addr, @rule_id), where @key_addr is the source as
 * the program keys it, already masked ("198.18.0.1", "fd00:0:0:1::"):
 * IPv4 text is an IPv4 key, IPv6 text (::ffff:a.b.c.d too) an IPv6 key.
 * Returns 0, or -ENOENT when the program made no such bucket bound to
 * that rule (under a plain or a split key).
 */
int fixture_bucket(struct xrl_datapath *dp, const char *key_addr,
		   uint32_t rule_id, struct xrl_bucket *out);

/* Overwrites the bucket of @key_addr (a plain key, as fixture_bucket()
 * reads), as a CPU in the middle of its update would have left it. */
void fixture_bucket_write(struct xrl_datapath *dp, const char *key_addr,
			  const struct xrl_bucket *bucket);

/* The bucket of level @level of rule @rule_id for the subnet @key_addr
 * (the source masked to the level: "198.18.1.0", "fd00:0:0:100::").
 * 0, or -ENOENT when the program made none. */
int fixture_level_bucket(struct xrl_datapath *dp, const char *key_addr,
			 uint32_t rule_id, unsigned level,
			 struct xrl_bucket *out);

/* Overwrites that level bucket, as fixture_bucket_write() does. */
void fixture_level_bucket_write(struct xrl_datapath *dp, const char *key_addr,
				uint32_t rule_id, unsigned level,
				const struct xrl_bucket *bucket);

/*
 * The offender record (include/xrl.h) of (@key_addr, @rule_id), keyed as
 * fixture_bucket() finds the bucket: the source's counts since its first
 * refusal. 0, or -ENOENT when it has none of that rule.
 */
int fixture_offender(struct xrl_datapath *dp, const char *key_addr,
		     uint32_t rule_id, struct xrl_offender *out);

/* The offender record of level @level's bucket (fixture_level_bucket()):
 * its drops are the level's refusals. */
int fixture_level_offender(struct xrl_datapath *dp, const char *key_addr,
			   uint32_t rule_id, unsigned level,
			   struct xrl_offender *out);

/* A source's counts as `top` shows them: its offender record's, since
 * its first refusal; all 0 (refused false) while it has none. */
struct fixture_counts {
	bool refused;		/* it has an offender record */
	uint32_t flags;		/* its bucket's XRL_BUCKET_FLAGS */
	uint64_t passed, dropped;
	uint64_t ban_until_ns;
};

/* The counts of (@key_addr, @rule_id), whose bucket must exist. */
struct fixture_counts fixture_source_counts(struct xrl_datapath *dp,
					    const char *key_addr,
					    uint32_t rule_id);

/* How many packets @bucket, under a limit of @pps and @burst, has taken
 * and not yet earned back at @now_ns: at one instant, what it admitted. */
uint64_t fixture_packets_owed(const struct xrl_bucket *bucket, uint64_t pps,
			      uint64_t burst, uint64_t now_ns);

#endif
