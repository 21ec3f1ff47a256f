// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * status tells what the data path's maps cost the kernel: every map the
 * program uses and the inner maps of every slot, each with the kernel's
 * own figure (checked against bpftool's bytes_memlock, read apart), the
 * per-CPU part by the documented formula (entries x value rounded up to
 * 8 bytes x possible CPUs), and the total at 64 and 128 CPUs from it.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include <sys/stat.h>
#include <time.h>
#include "cidr.h"
#include "daemon.h"
#include "loader.h"
#include "policy_map.h"
#include "policy_read.h"
#include "rule.h"
#include "topo.h"

static struct daemon_env env;
static char out[1 << 16];

static void setup(void)
{
	env_setup(&env);
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(memory, .init = setup, .fini = teardown, .timeout = 120);

/* bpftool's reading of @what ("map show id 12"), as JSON. */
static json_t *bpftool(const char *what)
{
	static char text[1 << 16];
	char cmd[128];
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "bpftool -j %s", what);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	n = fread(text, 1, sizeof(text) - 1, p);
	text[n] = '\0';
	cr_assert_eq(pclose(p), 0, "%s: %s", cmd, text);
	return json_loads(text, 0, NULL);
}

static size_t count_lines(const char *text)
{
	size_t n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

static json_t *status_memory(void)
{
	json_t *status, *memory;

	cr_assert_eq(env_cli(&env, out, sizeof(out), "status --json", false),
		     0, "%s", out);
	status = json_loads(out, 0, NULL);
	cr_assert_not_null(status, "%s", out);
	memory = json_incref(json_object_get(status, "memory"));
	json_decref(status);
	cr_assert_not_null(memory, "%s", out);
	return memory;
}

static json_int_t int_of(json_t *obj, const char *key)
{
	json_t *v = json_object_get(obj, key);

	cr_assert(json_is_integer(v), "%s", key);
	return json_integer_value(v);
}

/* The map of @maps with id @id, or NULL. */
static json_t *map_with_id(json_t *maps, json_int_t id)
{
	json_t *m;
	size_t i;

	json_array_foreach(maps, i, m)
		if (int_of(m, "id") == id)
			return m;
	return NULL;
}

Test(memory, every_map_is_counted_as_the_kernel_counts_it)
{
	json_t *memory = status_memory(), *maps, *m, *bt, *prog, *ids, *id;
	json_int_t sum = 0;
	char what[PATH_MAX + 64];
	size_t i;

	maps = json_object_get(memory, "maps");
	cr_assert_gt(json_array_size(maps), 20, "%zu maps",
		     json_array_size(maps));
	json_array_foreach(maps, i, m) {
		snprintf(what, sizeof(what), "map show id %lld",
			 (long long)int_of(m, "id"));
		bt = bpftool(what);
		cr_assert_not_null(bt, "%s", what);
		cr_assert_eq(int_of(m, "bytes"), int_of(bt, "bytes_memlock"),
			     "%s", json_string_value(json_object_get(m, "name")));
		cr_assert_eq(int_of(m, "max_entries"), int_of(bt, "max_entries"));
		sum += int_of(m, "bytes");
		json_decref(bt);
	}
	cr_assert_eq(int_of(memory, "bytes"), sum);

	/* Every map the program names is there (bpftool's list of them). */
	snprintf(what, sizeof(what), "prog show pinned %s/xdp_ratelimit",
		 env.pin_dir);
	prog = bpftool(what);
	cr_assert_not_null(prog);
	ids = json_object_get(prog, "map_ids");
	cr_assert_gt(json_array_size(ids), 0);
	json_array_foreach(ids, i, id)
		cr_assert_not_null(map_with_id(maps, json_integer_value(id)),
				   "map %lld", (long long)json_integer_value(id));
	json_decref(prog);
	json_decref(memory);
}

Test(memory, the_per_cpu_part_and_the_bigger_machines_follow_the_formula)
{
	json_t *memory = status_memory(), *maps, *m, *at;
	json_int_t cpus = int_of(memory, "possible_cpus"), per_cpu = 0;
	json_int_t total = int_of(memory, "bytes"), value;
	const char *type;
	size_t i, n_per_cpu = 0;

	cr_assert_eq(cpus, libbpf_num_possible_cpus());
	maps = json_object_get(memory, "maps");
	json_array_foreach(maps, i, m) {
		type = json_string_value(json_object_get(m, "type"));
		value = (int_of(m, "value_size") + 7) / 8 * 8;
		if (strncmp(type, "percpu_", 7) && strncmp(type, "lru_percpu_", 11)) {
			cr_assert_eq(int_of(m, "per_cpu_bytes"), 0, "%s", type);
			continue;
		}
		n_per_cpu++;
		/* A map not preallocated is charged for what it holds. */
		cr_assert_leq(int_of(m, "entries"), int_of(m, "max_entries"));
		cr_assert_eq(int_of(m, "per_cpu_bytes"),
			     int_of(m, "entries") * value * cpus, "%s",
			     json_string_value(json_object_get(m, "name")));
		cr_assert_leq(int_of(m, "per_cpu_bytes"), int_of(m, "bytes"));
		per_cpu += int_of(m, "per_cpu_bytes");
	}
	cr_assert_geq(n_per_cpu, 4, "the rule counters, the aggregates' "
		      "shares and state, the prefix buckets");
	cr_assert_eq(int_of(memory, "per_cpu_bytes"), per_cpu);
	at = json_object_get(memory, "at_cpus");
	cr_assert_eq(int_of(at, "64"), total - per_cpu + per_cpu / cpus * 64);
	cr_assert_eq(int_of(at, "128"), total - per_cpu + per_cpu / cpus * 128);
	json_decref(memory);
}

Test(memory, status_prints_the_total_and_each_large_map)
{
	json_t *memory = status_memory(), *maps, *m;
	char line[160];
	const char *name;
	size_t i;

	cr_assert_eq(env_cli(&env, out, sizeof(out), "status", false), 0,
		     "%s", out);
	snprintf(line, sizeof(line), "in %zu maps on %lld possible CPUs (at 64: ",
		 json_array_size(json_object_get(memory, "maps")),
		 (long long)int_of(memory, "possible_cpus"));
	cr_assert(strstr(out, line), "no \"%s\" in:\n%s", line, out);
	maps = json_object_get(memory, "maps");
	json_array_foreach(maps, i, m) {
		if (int_of(m, "bytes") < 64 * 1024)
			continue;
		name = json_string_value(json_object_get(m, "name"));
		snprintf(line, sizeof(line), "%lld x %lld B",
			 (long long)int_of(m, "entries"),
			 (long long)int_of(m, "value_size"));
		cr_assert(strstr(out, line), "%s: no \"%s\" in:\n%s", name,
			  line, out);
		cr_assert(strstr(out, name), "%s", name);
	}
	json_decref(memory);
}

/* ---- memory follows the policy in force (issue 23) ------------------- */

/* Puts @policy in force on the env's data path as the daemon does: ids
 * from the data path, one swap. */
static void put_in_force(struct xrl_policy *policy)
{
	char err[256] = "";

	cr_assert_eq(xrl_policy_take_ids(&env.dp, policy, NULL, err,
					 sizeof(err)), 0, "ids: %s", err);
	cr_assert_eq(xrl_policy_apply(&env.dp, policy, err, sizeof(err)), 0,
		     "applying: %s", err);
}

/* The default rule and @n - 1 deny rules. */
static void policy_of(struct xrl_policy *policy, size_t n)
{
	struct xrl_rule_spec *rules = calloc(n, sizeof(*rules));
	char text[64];
	size_t i, clash;

	cr_assert_not_null(rules);
	cr_assert_eq(xrl_policy_init(policy), 0);
	for (i = 0; i + 1 < n; i++) {
		snprintf(text, sizeof(text), "fd00:%x:%x::/64",
			 (unsigned)(i + 1) >> 16, (unsigned)(i + 1) & 0xffff);
		cr_assert_eq(xrl_cidr_parse(text, &rules[i].prefix), 0);
		xrl_rule_default_name(&rules[i], rules[i].name,
				      sizeof(rules[i].name));
		rules[i].action = XRL_ACTION_DENY;
	}
	cr_assert_eq(xrl_policy_add_many(policy, rules, n - 1, &clash), 0);
	free(rules);
	cr_assert_eq(policy->n_rules, n);
}

/* The map named @name with the most entries (of the two rule slots, the
 * one in force after a policy put in force twice: both alike). */
static json_t *map_named(json_t *maps, const char *name)
{
	json_t *m, *found = NULL;
	size_t i;

	json_array_foreach(maps, i, m)
		if (!strcmp(json_string_value(json_object_get(m, "name")),
			    name))
			found = m;
	cr_assert_not_null(found, "no map %s", name);
	return found;
}

Test(memory, the_maps_follow_the_rules_in_force_not_the_capacity,
     .timeout = 300)
{
	static const size_t sizes[] = { 1, 1000, XRL_DEFAULT_RULES - 1 };
	json_int_t cpus, per_cpu, total, at128;
	json_t *memory, *maps, *m;
	struct xrl_policy policy;
	size_t i, first;

	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		policy_of(&policy, sizes[i]);
		/* Twice: the counters of the rules a swap put out live one
		 * swap more; the same rules again leave exactly theirs. */
		put_in_force(&policy);
		put_in_force(&policy);
		xrl_policy_free(&policy);

		memory = status_memory();
		maps = json_object_get(memory, "maps");
		cpus = int_of(memory, "possible_cpus");
		/* The first XRL_RULE_STATS_FIRST in one map, the rest in
		 * the other (include/xrl.h). */
		first = sizes[i] < XRL_RULE_STATS_FIRST ? sizes[i] :
							  XRL_RULE_STATS_FIRST;
		m = map_named(maps, "xrl_rule_stats");
		cr_assert_eq(int_of(m, "entries"), (json_int_t)first,
			     "%zu rules: counters", sizes[i]);
		cr_assert_eq(int_of(m, "per_cpu_bytes"),
			     (json_int_t)first * 48 * cpus);
		m = map_named(maps, "xrl_rule_spill");
		cr_assert_eq(int_of(m, "entries"),
			     (json_int_t)(sizes[i] - first),
			     "%zu rules: counters spilled", sizes[i]);
		cr_assert_eq(int_of(m, "per_cpu_bytes"),
			     (json_int_t)(sizes[i] - first) * 48 * cpus);
		m = map_named(maps, "xrl_table");
		cr_assert_eq(int_of(m, "max_entries"), (json_int_t)sizes[i],
			     "%zu rules: the rule table", sizes[i]);
		m = map_named(maps, "xrl_rules");
		cr_assert_leq(int_of(m, "max_entries"),
			      2 * (json_int_t)sizes[i] + 2,
			      "%zu rules: the classifier", sizes[i]);
		per_cpu = int_of(memory, "per_cpu_bytes") / cpus;
		total = int_of(memory, "bytes");
		at128 = int_of(json_object_get(memory, "at_cpus"), "128");
		cr_log_info("%6zu rules: %lld bytes on %lld CPUs, %lld per CPU, "
			    "%lld at 128 CPUs", sizes[i], (long long)total,
			    (long long)cpus, (long long)per_cpu,
			    (long long)at128);
		if (sizes[i] <= 1000)
			cr_assert_leq(per_cpu, 1024 * 1024,
				      "%zu rules: %lld bytes per CPU",
				      sizes[i], (long long)per_cpu);
		json_decref(memory);
	}
}

/* bpftool's dump of the pin @name: how long it took and how much it
 * printed. */
static void dump_pin(const char *name, double *seconds, size_t *bytes)
{
	char cmd[PATH_MAX + 64], buf[1 << 16];
	struct timespec t0, t1;
	size_t n;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "bpftool map dump pinned %s/%s 2>&1",
		 env.pin_dir, name);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "%s", cmd);
	*bytes = 0;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		*bytes += n;
	cr_assert_eq(pclose(p), 0, "%s", cmd);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	*seconds = (double)(t1.tv_sec - t0.tv_sec) +
		   (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
}

Test(memory, every_pinned_map_dumps_in_under_a_second_and_a_mebibyte)
{
	const char *names[64];
	struct xrl_config config;
	char err[256] = "";
	size_t n, i, bytes;
	double seconds;

	cr_assert_eq(xrl_config_load_file("examples/policy.yaml", &config,
					  err, sizeof(err)), 0, "%s", err);
	put_in_force(&config.policy);
	xrl_config_free(&config);
	n = xrl_datapath_pin_names(names, 64);
	cr_assert_leq(n, 64);
	for (i = 0; i < n; i++) {
		/* The program, and the ring buffers of limit events and of
		 * a capture (bpftool dumps no ring buffer: `xdp-ratelimit
		 * events` and `capture` read them). */
		if (!strcmp(names[i], "xdp_ratelimit") ||
		    !strcmp(names[i], XRL_MAP_EVENTS) ||
		    !strcmp(names[i], XRL_MAP_CAPTURE_RB))
			continue;
		dump_pin(names[i], &seconds, &bytes);
		cr_log_info("%-18s %8zu bytes in %.3f s", names[i], bytes,
			    seconds);
		cr_expect_lt(seconds, 1.0, "%s: %.3f s", names[i], seconds);
		cr_expect_lt(bytes, 1024 * 1024, "%s: %zu bytes", names[i],
			     bytes);
	}
}

/* ---- --memory-limit -------------------------------------------------- */

static struct topo topo;

static void limit_setup(void)
{
	topo_create(&topo);
}

static void limit_teardown(void)
{
	topo_destroy(&topo);
}

TestSuite(memory_limit, .init = limit_setup, .fini = limit_teardown,
	  .timeout = 120);

static bool pinned_program(void)
{
	char path[PATH_MAX + 32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/xdp_ratelimit", topo.pin_dir);
	return stat(path, &st) == 0;
}

Test(memory_limit, attach_over_the_limit_refuses_in_one_line_leaving_nothing)
{
	static char out_text[4096], err_text[4096];
	int rc;

	rc = topo_cli(&topo, out_text, sizeof(out_text), err_text,
		      sizeof(err_text), "attach %s --memory-limit 128M",
		      topo.if_rx);
	cr_assert_neq(rc, 0, "%s%s", out_text, err_text);
	cr_assert_eq(count_lines(err_text), 1, "%s", err_text);
	cr_assert(strstr(err_text, "over --memory-limit 128.0 MiB; the largest: "
			 "xrl_buckets, 120.0 MiB, sized by --max-sources"),
		  "%s", err_text);
	cr_assert(strstr(err_text, "the maps would take "), "%s", err_text);
	cr_assert_not(pinned_program(), "a refusal pinned the program");
	cr_assert_neq(topo_sh("nsenter --net=/run/netns/%s ip -d link show "
			      "dev %s | grep -q 'prog/xdp'", topo.ns_rx,
			      topo.if_rx), 0, "a refusal attached it");

	/* Fewer sources fit under the same limit. */
	rc = topo_cli(&topo, out_text, sizeof(out_text), err_text,
		      sizeof(err_text), "attach %s --memory-limit 128M "
		      "--max-sources 65536", topo.if_rx);
	cr_assert_eq(rc, 0, "%s%s", out_text, err_text);
	cr_assert(pinned_program());
	cr_assert_eq(topo_cli(&topo, NULL, 0, err_text, sizeof(err_text),
			      "detach %s", topo.if_rx), 0, "%s", err_text);
}

Test(memory_limit, a_size_that_is_none_is_refused_before_anything_loads)
{
	static const char *const bad[] = { "0", "-1M", "12X", "1.5G", "150%",
					   "0%", "M", "" };
	static char err_text[4096];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		cr_assert_neq(topo_cli(&topo, NULL, 0, err_text,
				       sizeof(err_text),
				       "attach %s --memory-limit '%s'",
				       topo.if_rx, bad[i]), 0, "%s", bad[i]);
		cr_assert(strstr(err_text, "--memory-limit"), "%s: %s", bad[i],
			  err_text);
		cr_assert_eq(count_lines(err_text), 1, "%s", err_text);
		cr_assert_not(pinned_program());
	}
}
