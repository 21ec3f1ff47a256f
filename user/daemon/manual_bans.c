// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * manual_bans.c - bans by hand (manual_bans.h): the file they are kept
 * in, and the program's map they are written into. The commands that
 * change them: control_bans.c.
 *
 * A ban is a prefix the program drops before it looks at any rule (an
 * LPM trie checked while the policy head says manual bans exist), so it
 * wins over every rule, a longer allow rule too, and adding or lifting
 * one rebuilds no rule and touches no bucket; only the first ban and the
 * lifting of the last swap the head (the policy's atomic apply), to turn
 * the lookup on and off. Order of a change, so that nothing is
 * acknowledged that was not applied and saved: the new list is written
 * to a temporary file, the map entry is written, the head swapped if
 * need be, then the file renamed into place; a failure at any step
 * undoes the steps before it.
 *
 * Expiry is the program's: a ban holds while its clock (CLOCK_MONOTONIC)
 * is before the entry's end. The program never deletes an entry, so the
 * daemon lifts each ended ban from the map, the list and the file when
 * it ends (xrl_daemon_expire_bans()); the map holds no more than the
 * list. The file keeps the end in wall-clock time, so a restart, hours
 * later, puts back only what is left of each ban, and none that ended.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "cidr.h"
#include "clock.h"
#include "manual_bans.h"
#include "overlay.h"
#include "rule_json.h"
#include "state_file.h"

#define BANS_VERSION 1

uint64_t xrl_manual_bans_now_ms(void)
{
	return xrl_clock_ns(CLOCK_REALTIME) / XRL_NS_PER_MS;
}

/* The program's entry: its end on the program's clock. */
void xrl_manual_ban_value(const struct xrl_manual_ban_entry *e,
			  uint64_t now_ms, struct xrl_manual_ban *v)
{
	memset(v, 0, sizeof(*v));
	if (e->until_ms)
		v->until_ns = xrl_clock_ns(CLOCK_MONOTONIC) +
			      (e->until_ms - now_ms) * 1000000ULL;
}

bool xrl_manual_ban_ended(const struct xrl_manual_ban_entry *e,
			  uint64_t now_ms)
{
	return e->until_ms && e->until_ms <= now_ms;
}

void xrl_manual_bans_free(struct xrl_manual_bans *b)
{
	free(b->v);
	b->v = NULL;
	b->n = 0;
}

/* Entry @i of the file, every number in range: "bans[I].FIELD: why" in
 * @err. */
static int load_entry(json_t *item, size_t i, uint64_t now,
		      struct xrl_manual_ban_entry *e, char *err, size_t len)
{
	json_t *cidr = json_object_get(item, "cidr");
	json_t *until = json_object_get(item, "until_ms");
	char why[200];
	json_int_t ms;

	if (!json_is_object(item) || !json_is_string(cidr) ||
	    (until && !json_is_integer(until))) {
		snprintf(err, len, "bans[%zu]: not {\"cidr\": TEXT, "
			 "\"until_ms\": N}", i);
		return -EINVAL;
	}
	if (xrl_rule_json_cidr(json_string_value(cidr), &e->prefix, why,
			       sizeof(why))) {
		snprintf(err, len, "bans[%zu].%s", i, why);
		return -EINVAL;
	}
	if (!e->prefix.prefixlen) {
		snprintf(err, len, "bans[%zu].cidr: \"%.64s\" would ban every "
			 "source of its family", i, json_string_value(cidr));
		return -EINVAL;
	}
	ms = until ? json_integer_value(until) : 0;
	if (ms < 0 || (uint64_t)ms > now + XRL_BANS_AHEAD_MS) {
		snprintf(err, len, "bans[%zu].until_ms: %lld is %s", i,
			 (long long)ms,
			 ms < 0 ? "before 1970" : "more than 31 days ahead "
			 "(the longest ban is 30d)");
		return -ERANGE;
	}
	e->until_ms = ms;
	return 0;
}

int xrl_manual_bans_load(struct xrl_manual_bans *b, char *err, size_t len)
{
	uint64_t now = xrl_manual_bans_now_ms();
	json_t *root, *list, *item;
	char why[320] = "";
	size_t i;
	int ret = 0;

	b->v = NULL;
	b->n = 0;
	if (!b->path)
		return 0;
	root = xrl_state_read_json(b->path, &ret, err, len);
	if (!root)
		return ret == -ENOENT ? 0 : ret;
	list = json_object_get(root, "bans");
	if (json_integer_value(json_object_get(root, "version")) !=
	    BANS_VERSION || !json_is_array(list)) {
		snprintf(err, len, "%s: not a bans file of version %d",
			 b->path, BANS_VERSION);
		ret = -EINVAL;
		goto put;
	}
	if (json_array_size(list) > XRL_MANUAL_BANS) {
		snprintf(err, len, "%s: bans: %zu of them, more than the %d "
			 "the map holds", b->path, json_array_size(list),
			 XRL_MANUAL_BANS);
		ret = -E2BIG;
		goto put;
	}
	b->v = calloc(json_array_size(list) ?: 1, sizeof(*b->v));
	if (!b->v) {
		ret = -ENOMEM;
		goto put;
	}
	json_array_foreach(list, i, item) {
		ret = load_entry(item, i, now, &b->v[b->n], why, sizeof(why));
		if (ret) {
			snprintf(err, len, "%s: %s", b->path, why);
			xrl_manual_bans_free(b);
			goto put;
		}
		if (!xrl_manual_ban_ended(&b->v[b->n], now))
			b->n++;
	}
put:
	json_decref(root);
	return ret;
}

int xrl_manual_bans_install(const struct xrl_manual_bans *b, int map_fd)
{
	struct xrl_manual_ban_key key, next;
	struct xrl_manual_ban value;
	uint64_t now = xrl_manual_bans_now_ms();
	size_t i;

	/* What an earlier run left that the file does not hold goes. */
	while (!bpf_map_get_next_key(map_fd, NULL, &next))
		if (bpf_map_delete_elem(map_fd, &next))
			return -errno;
	for (i = 0; i < b->n; i++) {
		xrl_manual_ban_key(&b->v[i].prefix, &key);
		xrl_manual_ban_value(&b->v[i], now, &value);
		if (bpf_map_update_elem(map_fd, &key, &value, 0))
			return -errno;
	}
	return 0;
}

json_t *xrl_manual_ban_json(const struct xrl_manual_ban_entry *e, int map_fd)
{
	struct xrl_manual_ban_key key;
	struct xrl_manual_ban value;
	char cidr[64];
	json_t *obj;

	xrl_cidr_format(&e->prefix, cidr, sizeof(cidr));
	obj = json_pack("{s:s}", "cidr", cidr);
	if (obj && e->until_ms)
		json_object_set_new(obj, "until_ms", json_integer(e->until_ms));
	xrl_manual_ban_key(&e->prefix, &key);
	if (obj && map_fd >= 0 && !bpf_map_lookup_elem(map_fd, &key, &value))
		json_object_set_new(obj, "packets",
				    json_integer(value.packets));
	return obj;
}

/* Writes @v (n entries) to the temporary file beside @path. */
int xrl_manual_bans_stage(const char *path, const struct xrl_manual_ban_entry *v,
			  size_t n, char *err, size_t len)
{
	json_t *root, *list;
	size_t i;
	int ret;

	root = json_pack("{s:i, s:[]}", "version", BANS_VERSION, "bans");
	if (!root)
		return -ENOMEM;
	list = json_object_get(root, "bans");
	for (i = 0; i < n; i++)
		json_array_append_new(list, xrl_manual_ban_json(&v[i], -1));
	ret = xrl_state_stage_json(path, root);
	json_decref(root);
	if (ret)
		snprintf(err, len, "saving the bans to %s: %s; nothing changed",
			 path, strerror(-ret));
	return ret;
}

/* The list without @drop; NULL: no memory. */
struct xrl_manual_ban_entry *xrl_manual_bans_kept(const struct xrl_manual_bans *b,
					 const struct xrl_lpm_key *drop,
						  size_t extra, size_t *n)
{
	struct xrl_manual_ban_entry *v = calloc(b->n + extra, sizeof(*v));
	size_t i;

	*n = 0;
	if (!v)
		return NULL;
	for (i = 0; i < b->n; i++)
		if (!xrl_prefix_equal(&b->v[i].prefix, drop))
			v[(*n)++] = b->v[i];
	return v;
}

