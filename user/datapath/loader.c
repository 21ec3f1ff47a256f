// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * loader.c - the data path loaded from its skeleton, pinned, adopted from
 * its pins, and closed (loader.h).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/btf.h>
#include "xrl.h"	/* before the skeleton: its .bss names xrl types */
#include "xdp_ratelimit.skel.h"
#include "datapath.h"
#include "kernel.h"
#include "loader.h"
#include "policy.h"
#include "policy_map.h"
#include "rulemaps.h"
#include "typed_map.h"

#define PROG_PIN_NAME "xdp_ratelimit"

static void reset_fds(struct xrl_datapath *dp)
{
	dp->prog_fd = dp->policy_fd = dp->rule_table_fd = dp->buckets_fd = -1;
	dp->stats_fd = dp->rule_stats_fd = dp->settings_fd = -1;
	dp->rule_spill_fd = -1;
	dp->table_stats_fd = -1;
	dp->agg_shares_fd = dp->agg_state_fd = dp->agg_pool_fd = -1;
	dp->events_fd = dp->event_state_fd = -1;
	dp->ids_fd = -1;
	dp->bans_fd = dp->ban_stats_fd = dp->manual_bans_fd = -1;
	dp->offenders_fd = dp->tally_fd = dp->rule_cache_fd = -1;
	dp->blocklists_fd = dp->block_hits_fd = -1;
	dp->capture_fd = dp->capture_rb_fd = dp->capture_st_fd = -1;
	dp->escalations_fd = -1;
}

static __u32 map_btf_id(int map_fd)
{
	struct bpf_map_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(map_fd, &info, &len))
		return 0;
	return info.btf_id;
}

/* Any value will do; one an attacker cannot guess is better. */
static __u64 random_seed(void)
{
	__u64 seed = 0;

	if (getrandom(&seed, sizeof(seed), 0) != sizeof(seed))
		seed = (__u64)time(NULL) * 0x9e3779b97f4a7c15ULL ^ getpid();
	return seed | 1;
}

static int install_default_policy(struct xrl_datapath *dp)
{
	struct xrl_policy policy;
	char err[256];
	int ret;

	ret = xrl_policy_init(&policy);
	if (ret)
		return ret;
	ret = xrl_policy_apply(dp, &policy, err, sizeof(err));
	xrl_policy_free(&policy);
	return ret;
}

/* The outer maps whose inner maps userspace makes (typed_map.c). */
enum { TEMPLATE_TABLE, TEMPLATE_CLASSIFIER, TEMPLATE_HEAD, N_TEMPLATES };

static void close_templates(int fds[N_TEMPLATES])
{
	int i;

	for (i = 0; i < N_TEMPLATES; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * The templates of the maps of maps, typed as the inner maps will be
 * (typed_map.c says why); hashes all, so each inner map is sized to the
 * policy it holds. Their fds into @fds; 0 or -errno.
 */
static int set_templates(struct xdp_ratelimit_bpf *skel,
			 int fds[N_TEMPLATES])
{
	struct btf *btf = xrl_template_btf();
	struct bpf_map *outer[N_TEMPLATES] = {
		[TEMPLATE_TABLE] = skel->maps.xrl_rule_table,
		[TEMPLATE_CLASSIFIER] = skel->maps.xrl_policy,
		[TEMPLATE_HEAD] = skel->maps.xrl_settings,
	};
	struct xrl_map_shape shapes[N_TEMPLATES] = {
		[TEMPLATE_TABLE] = xrl_table_shape(1),
		[TEMPLATE_CLASSIFIER] = xrl_classifier_shape(1),
		[TEMPLATE_HEAD] = xrl_head_shape,
	};
	int i, ret = 0;

	for (i = 0; i < N_TEMPLATES && !ret; i++) {
		fds[i] = xrl_typed_map_create(&shapes[i], btf,
					      btf ? btf__fd(btf) : -1);
		ret = fds[i] < 0 ? fds[i] :
		      bpf_map__set_inner_map_fd(outer[i], fds[i]);
	}
	btf__free(btf);
	return ret;
}

__u32 xrl_offender_entries(__u32 max_sources)
{
	__u32 floor = max_sources < XRL_OFFENDER_MIN ? max_sources :
						       XRL_OFFENDER_MIN;
	__u32 share = max_sources / XRL_OFFENDER_SHARE;

	return share > floor ? share : floor;
}

/* The entries of xrl_rule_stats: XRL_RULE_STATS_FIRST unless told, and
 * no more than the ids a data path of @max_rules has. */
static __u32 rule_stats_first(const struct xrl_load_opts *opts,
			      __u32 max_rules)
{
	__u32 first = opts && opts->rule_stats_first ? opts->rule_stats_first :
			XRL_RULE_STATS_FIRST;
	__u32 ids = xrl_rule_ids_for(max_rules);

	return first < ids ? first : ids;
}

int xrl_datapath_load(struct xrl_datapath *dp, const struct xrl_load_opts *opts)
{
	__u32 max_rules = opts && opts->max_rules ? opts->max_rules :
			  XRL_DEFAULT_RULES;
	int templates[N_TEMPLATES] = { -1, -1, -1 };
	struct xdp_ratelimit_bpf *skel;
	int ret;

	memset(dp, 0, sizeof(*dp));
	reset_fds(dp);
	skel = xdp_ratelimit_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->use_test_clock = opts && opts->test_clock;
	skel->rodata->have_bpf_loop = xrl_kernel_bpf_loop();
	skel->rodata->have_xdp_load_bytes = xrl_kernel_xdp_load_bytes();
	skel->rodata->prefix_hash_seed = opts && opts->hash_seed ?
					 opts->hash_seed : random_seed();
	ret = bpf_map__set_max_entries(skel->maps.xrl_buckets,
				       opts && opts->max_sources ?
				       opts->max_sources : XRL_DEFAULT_SOURCES);
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.xrl_rule_stats,
					       rule_stats_first(opts, max_rules));
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.xrl_rule_spill,
					       xrl_rule_ids_for(max_rules));
	/* Sliding windows' state: as many sources, up to a bound, as its
	 * entries are twice a bucket's (bpf/window.h). */
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.xrl_windows,
			opts && opts->max_sources &&
			opts->max_sources < XRL_WINDOW_SOURCES ?
			opts->max_sources : XRL_WINDOW_SOURCES);
	if (!ret)
		ret = bpf_map__set_max_entries(skel->maps.xrl_offenders,
			xrl_offender_entries(opts && opts->max_sources ?
					     opts->max_sources :
					     XRL_DEFAULT_SOURCES));
	if (!ret)
		ret = set_templates(skel, templates);
	if (!ret)
		ret = xdp_ratelimit_bpf__load(skel);
	close_templates(templates);	/* only their shapes were needed */
	if (ret)
		goto destroy;

	dp->skel = skel;
	dp->prog_fd = bpf_program__fd(skel->progs.xdp_ratelimit);
	dp->policy_fd = bpf_map__fd(skel->maps.xrl_policy);
	dp->rule_table_fd = bpf_map__fd(skel->maps.xrl_rule_table);
	dp->buckets_fd = bpf_map__fd(skel->maps.xrl_buckets);
	dp->stats_fd = bpf_map__fd(skel->maps.xrl_stats);
	dp->rule_stats_fd = bpf_map__fd(skel->maps.xrl_rule_stats);
	dp->rule_spill_fd = bpf_map__fd(skel->maps.xrl_rule_spill);
	dp->settings_fd = bpf_map__fd(skel->maps.xrl_settings);
	dp->table_stats_fd = bpf_map__fd(skel->maps.xrl_table_stats);
	dp->agg_shares_fd = bpf_map__fd(skel->maps.xrl_agg_shares);
	dp->agg_state_fd = bpf_map__fd(skel->maps.xrl_agg_state);
	dp->agg_pool_fd = bpf_map__fd(skel->maps.xrl_agg_pool);
	dp->events_fd = bpf_map__fd(skel->maps.xrl_events);
	dp->event_state_fd = bpf_map__fd(skel->maps.xrl_event_state);
	dp->bans_fd = bpf_map__fd(skel->maps.xrl_bans);
	dp->offenders_fd = bpf_map__fd(skel->maps.xrl_offenders);
	dp->tally_fd = bpf_map__fd(skel->maps.xrl_tally);
	dp->rule_cache_fd = bpf_map__fd(skel->maps.xrl_rule_cache);
	dp->ban_stats_fd = bpf_map__fd(skel->maps.xrl_ban_stats);
	dp->manual_bans_fd = bpf_map__fd(skel->maps.xrl_manual_bans);
	dp->blocklists_fd = bpf_map__fd(skel->maps.xrl_blocklists);
	dp->block_hits_fd = bpf_map__fd(skel->maps.xrl_block_hits);
	dp->capture_fd = bpf_map__fd(skel->maps.xrl_capture);
	dp->capture_rb_fd = bpf_map__fd(skel->maps.xrl_capture_rb);
	dp->capture_st_fd = bpf_map__fd(skel->maps.xrl_capture_st);
	dp->escalations_fd = bpf_map__fd(skel->maps.xrl_escalations);
	dp->btf_id = map_btf_id(dp->buckets_fd);
	dp->ids_fd = xrl_id_map_create(NULL);
	if (dp->ids_fd < 0) {
		ret = dp->ids_fd;
		goto forget;
	}
	ret = install_default_policy(dp);
	if (ret)
		goto close_ids;
	return 0;

close_ids:
	close(dp->ids_fd);
forget:
	reset_fds(dp);
	dp->skel = NULL;
destroy:
	xdp_ratelimit_bpf__destroy(skel);
	return ret < 0 ? ret : -EINVAL;
}

static void pin_path(const char *dir, const char *name, char *path, size_t len)
{
	snprintf(path, len, "%s/%s", dir, name);
}

struct pinned_object {
	const char *name;
	size_t fd_offset;
};

static const struct pinned_object pinned_objects[] = {
	{ PROG_PIN_NAME, offsetof(struct xrl_datapath, prog_fd) },
	{ XRL_MAP_POLICY, offsetof(struct xrl_datapath, policy_fd) },
	{ XRL_MAP_RULE_TABLE, offsetof(struct xrl_datapath, rule_table_fd) },
	{ XRL_MAP_BUCKETS, offsetof(struct xrl_datapath, buckets_fd) },
	{ XRL_MAP_STATS, offsetof(struct xrl_datapath, stats_fd) },
	{ XRL_MAP_RULE_STATS, offsetof(struct xrl_datapath, rule_stats_fd) },
	{ XRL_MAP_RULE_SPILL, offsetof(struct xrl_datapath, rule_spill_fd) },
	{ XRL_MAP_SETTINGS, offsetof(struct xrl_datapath, settings_fd) },
	{ XRL_MAP_TABLE_STATS, offsetof(struct xrl_datapath, table_stats_fd) },
	{ XRL_MAP_AGG_SHARES, offsetof(struct xrl_datapath, agg_shares_fd) },
	{ XRL_MAP_AGG_STATE, offsetof(struct xrl_datapath, agg_state_fd) },
	{ XRL_MAP_AGG_POOL, offsetof(struct xrl_datapath, agg_pool_fd) },
	{ XRL_MAP_EVENTS, offsetof(struct xrl_datapath, events_fd) },
	{ XRL_MAP_EVENT_STATE, offsetof(struct xrl_datapath, event_state_fd) },
	{ XRL_MAP_BANS, offsetof(struct xrl_datapath, bans_fd) },
	{ XRL_MAP_OFFENDERS, offsetof(struct xrl_datapath, offenders_fd) },
	{ XRL_MAP_TALLY, offsetof(struct xrl_datapath, tally_fd) },
	{ XRL_MAP_BAN_STATS, offsetof(struct xrl_datapath, ban_stats_fd) },
	{ XRL_MAP_MANUAL_BANS, offsetof(struct xrl_datapath, manual_bans_fd) },
	{ XRL_MAP_ESCALATIONS, offsetof(struct xrl_datapath, escalations_fd) },
	{ XRL_MAP_BLOCKLISTS, offsetof(struct xrl_datapath, blocklists_fd) },
	{ XRL_MAP_BLOCK_HITS, offsetof(struct xrl_datapath, block_hits_fd) },
	/* Last: pins made before these existed are adopted without them
	 * (and cannot capture: optional_pin()). */
	{ XRL_MAP_CAPTURE, offsetof(struct xrl_datapath, capture_fd) },
	{ XRL_MAP_CAPTURE_RB, offsetof(struct xrl_datapath, capture_rb_fd) },
	{ XRL_MAP_CAPTURE_ST, offsetof(struct xrl_datapath, capture_st_fd) },
	{ XRL_PIN_IDS, offsetof(struct xrl_datapath, ids_fd) },
};

/* The pins a data path pinned before they existed lacks. */
static bool optional_pin(struct xrl_datapath *dp, int *fd)
{
	return fd == &dp->ids_fd || fd == &dp->capture_fd ||
	       fd == &dp->capture_rb_fd || fd == &dp->capture_st_fd;
}

#define N_PINNED (sizeof(pinned_objects) / sizeof(pinned_objects[0]))

/* The maps in force, pinned beside the others for bpftool. */
static const char *const inner_pins[] = {
	XRL_PIN_RULES, XRL_PIN_TABLE, XRL_PIN_HEAD,
};

#define N_INNER (sizeof(inner_pins) / sizeof(inner_pins[0]))

size_t xrl_datapath_pin_names(const char **names, size_t max)
{
	size_t i;

	for (i = 0; i < N_PINNED + N_INNER && i < max; i++)
		names[i] = i < N_PINNED ? pinned_objects[i].name :
					  inner_pins[i - N_PINNED];
	return N_PINNED + N_INNER;
}

static int *object_fd(struct xrl_datapath *dp, const struct pinned_object *o)
{
	return (int *)((char *)dp + o->fd_offset);
}

/* Pins the inner map in slot @slot of @outer_fd as @name, if any. */
static void pin_inner(int outer_fd, __u32 slot, const char *dir,
		      const char *name)
{
	char path[PATH_MAX + 32];
	__u32 id;
	int fd;

	if (bpf_map_lookup_elem(outer_fd, &slot, &id))
		return;
	fd = bpf_map_get_fd_by_id(id);
	if (fd < 0)
		return;
	pin_path(dir, name, path, sizeof(path));
	bpf_obj_pin(fd, path);
	close(fd);
}

/* The map of @obj that the kernel names @kname (its name cut to
 * BPF_OBJ_NAME_LEN - 1), not yet given an fd. */
static struct bpf_map *map_named(struct bpf_object *obj, const char *kname)
{
	size_t n = strlen(kname);
	struct bpf_map *map;
	const char *name;

	bpf_object__for_each_map(map, obj) {
		name = bpf_map__name(map);
		if (bpf_map__fd(map) < 0 && !strncmp(name, kname, n) &&
		    (name[n] == '\0' || n == BPF_OBJ_NAME_LEN - 1))
			return map;
	}
	return NULL;
}

/* Gives each map @obj shares with the program @prog_fd that one's fd. */
static int reuse_maps(struct bpf_object *obj, int prog_fd)
{
	__u32 ids[64], i, info_len;
	struct bpf_prog_info info = {
		.nr_map_ids = sizeof(ids) / sizeof(ids[0]),
		.map_ids = (__u64)(unsigned long)ids,
	};
	struct bpf_map_info map_info;
	struct bpf_map *map;
	int fd, ret;

	info_len = sizeof(info);
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &info_len))
		return -errno;
	if (info.nr_map_ids > sizeof(ids) / sizeof(ids[0]))
		return -E2BIG;
	for (i = 0; i < info.nr_map_ids; i++) {
		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			return -errno;
		memset(&map_info, 0, sizeof(map_info));
		info_len = sizeof(map_info);
		ret = bpf_obj_get_info_by_fd(fd, &map_info, &info_len) ? -errno : 0;
		map = ret ? NULL : map_named(obj, map_info.name);
		if (!ret && !map)
			ret = -ESTALE;
		if (!ret)
			ret = bpf_map__reuse_fd(map, fd);	/* takes a dup */
		close(fd);
		if (ret)
			return ret;
	}
	return 0;
}

struct bpf_object *xrl_datapath_open_again(const struct xrl_datapath *dp)
{
	/* The skeleton's name: its internal maps are named after it. */
	LIBBPF_OPTS(bpf_object_open_opts, opts,
		.object_name = "xdp_ratelimit_bpf");
	struct bpf_object *obj;
	const void *bytes;
	size_t size;
	int ret;

	bytes = xdp_ratelimit_bpf__elf_bytes(&size);
	obj = bpf_object__open_mem(bytes, size, &opts);
	if (!obj)
		return NULL;
	ret = reuse_maps(obj, dp->prog_fd);
	if (ret) {
		bpf_object__close(obj);
		errno = -ret;
		return NULL;
	}
	return obj;
}


int xrl_datapath_pin(struct xrl_datapath *dp, const char *dir)
{
	struct xrl_policy_head head;
	char path[PATH_MAX + 32];
	size_t i;
	int ret;

	if (mkdir(dir, 0700) && errno != EEXIST)
		return -errno;
	for (i = 0; i < N_PINNED; i++) {
		pin_path(dir, pinned_objects[i].name, path, sizeof(path));
		if (bpf_obj_pin(*object_fd(dp, &pinned_objects[i]), path)) {
			ret = -errno;
			goto unpin;
		}
	}
	snprintf(dp->pin_dir, sizeof(dp->pin_dir), "%s", dir);
	/* The maps in force, for bpftool (re-pinned by each apply). */
	if (!xrl_datapath_head(dp, &head)) {
		pin_inner(dp->policy_fd, head.rules_slot, dir, XRL_PIN_RULES);
		pin_inner(dp->rule_table_fd, head.rules_slot, dir,
			  XRL_PIN_TABLE);
		pin_inner(dp->settings_fd, 0, dir, XRL_PIN_HEAD);
	}
	return 0;

unpin:
	while (i-- > 0) {
		pin_path(dir, pinned_objects[i].name, path, sizeof(path));
		unlink(path);
	}
	return ret;
}

int xrl_datapath_unpin(struct xrl_datapath *dp)
{
	char path[PATH_MAX + 32];
	size_t i;

	if (!dp->pin_dir[0])
		return 0;
	for (i = 0; i < N_PINNED; i++) {
		pin_path(dp->pin_dir, pinned_objects[i].name, path, sizeof(path));
		unlink(path);
	}
	pin_path(dp->pin_dir, XRL_PIN_RULES, path, sizeof(path));
	unlink(path);
	pin_path(dp->pin_dir, XRL_PIN_HEAD, path, sizeof(path));
	unlink(path);
	pin_path(dp->pin_dir, XRL_PIN_TABLE, path, sizeof(path));
	unlink(path);
	if (rmdir(dp->pin_dir) && errno != ENOENT)
		return -errno;
	dp->pin_dir[0] = '\0';
	return 0;
}

/* Pins from before the id mark: one is made above the ids in force,
 * marked as wrapped since deleted rules may have left state. */
static int adopt_without_ids(struct xrl_datapath *dp)
{
	char path[PATH_MAX + 32];

	dp->ids_fd = xrl_id_map_create(dp);
	if (dp->ids_fd < 0)
		return dp->ids_fd;
	pin_path(dp->pin_dir, XRL_PIN_IDS, path, sizeof(path));
	return bpf_obj_pin(dp->ids_fd, path) ? -errno : 0;
}

bool xrl_datapath_pinned(const char *dir)
{
	char path[PATH_MAX + 32];

	pin_path(dir, PROG_PIN_NAME, path, sizeof(path));
	return !access(path, F_OK);
}

/*
 * The program's map named @name, found through the program: for the
 * per-CPU state readers need and operators do not (xrl_rule_cache: 64
 * values per CPU, which no pin offers to a bpftool dump). -ENOENT for
 * a program without it (loaded before it existed).
 */
static int prog_map_fd(int prog_fd, const char *name)
{
	struct bpf_prog_info prog = {};
	__u32 len = sizeof(prog), ids[64], i;
	int fd, ret = -ENOENT;

	prog.nr_map_ids = sizeof(ids) / sizeof(ids[0]);
	prog.map_ids = (__u64)(unsigned long)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &prog, &len))
		return -errno;
	for (i = 0; i < prog.nr_map_ids && i < 64 && ret < 0; i++) {
		struct bpf_map_info map = {};
		__u32 map_len = sizeof(map);

		fd = bpf_map_get_fd_by_id(ids[i]);
		if (fd < 0)
			continue;
		if (!bpf_obj_get_info_by_fd(fd, &map, &map_len) &&
		    !strcmp(map.name, name))
			ret = fd;
		else
			close(fd);
	}
	return ret;
}

int xrl_datapath_open_pinned(struct xrl_datapath *dp, const char *dir)
{
	char path[PATH_MAX + 32];
	size_t i;
	int ret, fd;

	memset(dp, 0, sizeof(*dp));
	reset_fds(dp);
	for (i = 0; i < N_PINNED; i++) {
		pin_path(dir, pinned_objects[i].name, path, sizeof(path));
		fd = bpf_obj_get(path);
		if (fd < 0 && errno == ENOENT &&
		    optional_pin(dp, object_fd(dp, &pinned_objects[i])))
			continue;
		if (fd < 0) {
			ret = -errno;
			goto close_fds;
		}
		*object_fd(dp, &pinned_objects[i]) = fd;
	}
	dp->btf_id = map_btf_id(dp->buckets_fd);
	snprintf(dp->pin_dir, sizeof(dp->pin_dir), "%s", dir);
	/* < 0: a program without copies; its counters are all in the
	 * hash (stats.c). */
	dp->rule_cache_fd = prog_map_fd(dp->prog_fd, XRL_MAP_RULE_CACHE);
	if (dp->ids_fd < 0) {
		ret = adopt_without_ids(dp);
		if (ret)
			goto close_fds;
	}
	return 0;

close_fds:
	xrl_datapath_close(dp);
	return ret;
}

void xrl_datapath_close(struct xrl_datapath *dp)
{
	size_t i;
	int *fd;

	xrl_rules_forget(dp);
	if (dp->skel) {
		/* The skeleton owns its fds, but for the id mark's. */
		if (dp->ids_fd >= 0)
			close(dp->ids_fd);
		xdp_ratelimit_bpf__destroy(dp->skel);
		dp->skel = NULL;
	} else {
		for (i = 0; i < N_PINNED; i++) {
			fd = object_fd(dp, &pinned_objects[i]);
			if (*fd >= 0)
				close(*fd);
		}
		if (dp->rule_cache_fd >= 0)
			close(dp->rule_cache_fd);
	}
	reset_fds(dp);
}

void xrl_datapath_set_time(struct xrl_datapath *dp, __u64 now_ns)
{
	if (dp->skel && dp->skel->bss)
		dp->skel->bss->test_clock_ns = now_ns;
}

void xrl_datapath_set_later_time(struct xrl_datapath *dp, __u64 later_ns)
{
	if (dp->skel && dp->skel->bss)
		dp->skel->bss->test_clock_later_ns = later_ns;
}
