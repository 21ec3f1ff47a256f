// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * metrics_http.c - /metrics over libmicrohttpd, in MHD's own thread.
 */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <net/if.h>
#include <microhttpd.h>
#include <bpf/bpf.h>
#include "attach.h"
#include "datapath.h"
#include "mapwalk.h"
#include "metrics_collect.h"
#include "metrics_http.h"
#include "pin.h"
#include "policy.h"

struct rule_name {
	__u32 id;
	bool monitor;
	bool escalates;		/* has escalate_: its escalated bans shown */
	char name[XRL_RULE_NAME_MAX];
};

struct xrl_metrics_server {
	struct MHD_Daemon *mhd;
	const struct xrl_datapath *dp;
	pthread_mutex_t lock;		/* the fields below */
	struct rule_name *rules;
	size_t n_rules;
	bool have_policy;
	uint64_t generation;
	time_t applied;
	xrl_metrics_extra_fn extra;
	void *extra_ctx;
	xrl_health_degraded_fn degraded;
	void *degraded_ctx;
	char (*ifaces)[IF_NAMESIZE];	/* /healthz: the daemon's interfaces */
	size_t n_ifaces;
	__u32 head_map_id;		/* and the policy head it applied */
	time_t reload_at;		/* last reload tried, 0: none */
	bool reload_ok;
	__u32 prog_id;			/* of the data path, set at start */
	/* Only the scrape thread (MHD's one thread) touches these. */
	long tracked_sources;
	time_t counted_at;
	__u64 evictions;
};

/*
 * The bucket count, taken again when older than the interval, outside
 * the lock: at a million sources a count reads the whole table.
 */
static void count_sources(struct xrl_metrics_server *srv)
{
	time_t now = time(NULL);
	long count;

	if (srv->counted_at &&
	    now - srv->counted_at < XRL_METRICS_COUNT_INTERVAL_S)
		return;
	count = xrl_map_count(srv->dp->buckets_fd,
			      sizeof(struct xrl_bucket_key));
	if (count >= 0) {
		srv->tracked_sources = count;
		srv->counted_at = now;
	}
}

/*
 * Evictions are inserts minus the count and the buckets userspace
 * deleted; a stale count makes them look higher, then lower again, so
 * the counter keeps its highest value.
 */
static void add_table(struct xrl_metrics_server *srv, struct xrl_metrics *m)
{
	__u64 inserts = m->table.events[XRL_TABLE_INSERT];
	__u64 gone = (__u64)srv->tracked_sources + m->forgotten;

	if (srv->tracked_sources >= 0 && inserts > gone &&
	    inserts - gone > srv->evictions)
		srv->evictions = inserts - gone;
	m->tracked_sources = srv->tracked_sources;
	m->evictions = srv->evictions;
}

/* The exposition, or NULL. Holds the lock for the rule names only. */
static char *scrape(struct xrl_metrics_server *srv, size_t *len)
{
	struct xrl_metrics m = { .tracked_sources = -1 };
	char *text = NULL;
	size_t i;
	int ret;

	count_sources(srv);
	pthread_mutex_lock(&srv->lock);
	m.rules = calloc(srv->n_rules ? srv->n_rules : 1, sizeof(*m.rules));
	if (!m.rules)
		goto unlock;
	for (i = 0; i < srv->n_rules; i++) {
		m.rules[i].id = srv->rules[i].id;
		m.rules[i].name = srv->rules[i].name;
		m.rules[i].monitor = srv->rules[i].monitor;
		m.rules[i].escalates = srv->rules[i].escalates;
	}
	m.n_rules = srv->n_rules;
	m.have_policy = srv->have_policy;
	m.generation = srv->generation;
	m.reload_time = srv->applied;
	m.extra = srv->extra;
	m.extra_ctx = srv->extra_ctx;
	m.have_last_reload = srv->reload_at != 0;
	m.last_reload_ok = srv->reload_ok;
	m.last_reload_time = srv->reload_at;
	ret = xrl_metrics_collect(srv->dp, &m);
	if (!ret) {
		add_table(srv, &m);
		xrl_metrics_format(&m, &text, len);
	}
unlock:
	pthread_mutex_unlock(&srv->lock);
	free(m.rules);
	return text;
}

/* @mode: MHD_RESPMEM_PERSISTENT for a constant @text, else
 * MHD_RESPMEM_MUST_COPY. */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *text, enum MHD_ResponseMemoryMode mode)
{
	struct MHD_Response *response;
	enum MHD_Result ret;

	response = MHD_create_response_from_buffer(strlen(text), (void *)text,
						   mode);
	if (!response)
		return MHD_NO;
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	ret = MHD_queue_response(conn, status, response);
	MHD_destroy_response(response);
	return ret;
}

/* Whether interface @name runs the data path's program; why not in @why. */
static bool iface_healthy(const struct xrl_metrics_server *srv,
			  const char *name, char *why, size_t len)
{
	struct xrl_xdp_state xdp;
	int ifindex = xrl_ifindex(name);

	if (ifindex < 0) {
		snprintf(why, len, "%s: no such interface", name);
		return false;
	}
	if (xrl_xdp_query(ifindex, &xdp)) {
		snprintf(why, len, "%s: cannot query XDP: %s", name,
			 strerror(errno));
		return false;
	}
	if (!xdp.prog_id) {
		snprintf(why, len, "%s: no XDP program attached", name);
		return false;
	}
	if (xdp.prog_id != srv->prog_id) {
		snprintf(why, len, "%s: another XDP program is attached: %s "
			 "(prog id %u)", name, xdp.prog_name, xdp.prog_id);
		return false;
	}
	return true;
}

/* The interfaces attached from the pins besides the daemon's own: a CLI
 * attach to the daemon's pins (xdp-ratelimit attach). */
struct pinned_walk {
	const struct xrl_metrics_server *srv;
	char *why;
	size_t len;
	size_t n_pinned;
};

static bool daemon_iface(const struct xrl_metrics_server *srv,
			 const char *name)
{
	size_t i;

	for (i = 0; i < srv->n_ifaces; i++)
		if (!strcmp(srv->ifaces[i], name))
			return true;
	return false;
}

static int pinned_healthy(const char *ifname, void *ctx)
{
	struct pinned_walk *walk = ctx;

	if (daemon_iface(walk->srv, ifname))
		return 0;
	walk->n_pinned++;
	return iface_healthy(walk->srv, ifname, walk->why, walk->len) ? 0 : 1;
}

/* Why the data path is not enforcing the daemon's policy, in @why (empty
 * when it is). Under the lock. */
static void enforcing(struct xrl_metrics_server *srv, char *why, size_t len)
{
	struct pinned_walk walk = { .srv = srv, .why = why, .len = len };
	__u32 zero = 0, in_force;
	size_t i;

	for (i = 0; !why[0] && i < srv->n_ifaces; i++)
		iface_healthy(srv, srv->ifaces[i], why, len);
	if (!why[0] && srv->dp->pin_dir[0])
		xrl_pin_for_each_link(srv->dp->pin_dir, pinned_healthy, &walk);
	if (!why[0] && !srv->n_ifaces && !walk.n_pinned)
		snprintf(why, len, "attached to no interface");
	if (!why[0] && bpf_map_lookup_elem(srv->dp->settings_fd, &zero,
					   &in_force))
		snprintf(why, len, "no policy in force (%s[0]: %s)",
			 XRL_MAP_SETTINGS, strerror(errno));
	else if (!why[0] && in_force != srv->head_map_id)
		snprintf(why, len, "the policy in force (head map %u) "
			 "is not the daemon's (%u): replaced outside it; "
			 "reload", in_force, srv->head_map_id);
}

/*
 * 200 "ok" when every interface of the daemon, and every other one
 * attached from its pins, runs the program and the policy the daemon
 * applied is in force; 503 with the first reason otherwise. A global
 * budget without Redis still enforces (its fallback share): 200, with
 * "degraded: why" for the probes that read the body.
 */
static unsigned health(struct xrl_metrics_server *srv, char *text, size_t len)
{
	char why[256] = "", degraded[256] = "";

	pthread_mutex_lock(&srv->lock);
	enforcing(srv, why, sizeof(why));
	if (!why[0] && srv->degraded)
		srv->degraded(srv->degraded_ctx, degraded, sizeof(degraded));
	pthread_mutex_unlock(&srv->lock);
	if (why[0]) {
		snprintf(text, len, "unhealthy: %s\n", why);
		return MHD_HTTP_SERVICE_UNAVAILABLE;
	}
	if (degraded[0]) {
		snprintf(text, len, "degraded: %s\n", degraded);
		return MHD_HTTP_OK;
	}
	snprintf(text, len, "ok\n");
	return MHD_HTTP_OK;
}

static enum MHD_Result handle(void *cls, struct MHD_Connection *conn,
			      const char *url, const char *method,
			      const char *version, const char *upload_data,
			      size_t *upload_data_size, void **con_cls)
{
	struct xrl_metrics_server *srv = cls;
	struct MHD_Response *response;
	enum MHD_Result ret;
	size_t len = 0;
	char *text;

	if (strcmp(method, MHD_HTTP_METHOD_GET) &&
	    strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply(conn, MHD_HTTP_METHOD_NOT_ALLOWED,
			     "only GET /metrics or /healthz\n",
			     MHD_RESPMEM_PERSISTENT);
	if (!strcmp(url, "/healthz")) {
		char body[512];
		unsigned status = health(srv, body, sizeof(body));

		return reply(conn, status, body, MHD_RESPMEM_MUST_COPY);
	}
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND,
			     "see /metrics or /healthz\n",
			     MHD_RESPMEM_PERSISTENT);
	text = scrape(srv, &len);
	if (!text)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "reading the counters failed\n",
			     MHD_RESPMEM_PERSISTENT);
	response = MHD_create_response_from_buffer(len, text,
						   MHD_RESPMEM_MUST_FREE);
	if (!response) {
		free(text);
		return MHD_NO;
	}
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
				XRL_METRICS_CONTENT_TYPE);
	ret = MHD_queue_response(conn, MHD_HTTP_OK, response);
	MHD_destroy_response(response);
	return ret;
}

/* "HOST:PORT" or "[HOST]:PORT", numeric only. */
static int parse_listen(const char *listen, struct addrinfo **addr, char *err,
			size_t len)
{
	struct addrinfo hints = {
		.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV | AI_PASSIVE,
		.ai_socktype = SOCK_STREAM,
	};
	char host[256];
	const char *colon = strrchr(listen, ':'), *start = listen;
	size_t host_len;
	int ret;

	if (!colon || !colon[1])
		goto bad;
	host_len = colon - listen;
	if (listen[0] == '[') {
		if (host_len < 2 || listen[host_len - 1] != ']')
			goto bad;
		start = listen + 1;
		host_len -= 2;
	}
	if (!host_len || host_len >= sizeof(host))
		goto bad;
	memcpy(host, start, host_len);
	host[host_len] = '\0';
	ret = getaddrinfo(host, colon + 1, &hints, addr);
	if (ret) {
		snprintf(err, len, "--metrics %s: %s", listen,
			 gai_strerror(ret));
		return -EINVAL;
	}
	return 0;
bad:
	snprintf(err, len, "--metrics %s: expected ADDRESS:PORT "
		 "(127.0.0.1:9101, [::1]:9101)", listen);
	return -EINVAL;
}

static __u32 prog_id_of(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return 0;
	return info.id;
}

int xrl_metrics_listen_check(const char *listen, char *err, size_t len)
{
	struct addrinfo *addr;
	int ret = parse_listen(listen, &addr, err, len);

	if (!ret)
		freeaddrinfo(addr);
	return ret;
}

struct xrl_metrics_server *xrl_metrics_server_start(const char *listen,
						    const struct xrl_datapath *dp,
						    char *err, size_t len)
{
	struct xrl_metrics_server *srv;
	struct addrinfo *addr;
	unsigned flags;
	int ret;

	ret = parse_listen(listen, &addr, err, len);
	if (ret) {
		errno = -ret;
		return NULL;
	}
	srv = calloc(1, sizeof(*srv));
	if (!srv) {
		snprintf(err, len, "out of memory");
		errno = ENOMEM;
		goto free_addr;
	}
	srv->dp = dp;
	srv->tracked_sources = -1;
	srv->prog_id = prog_id_of(dp->prog_fd);
	pthread_mutex_init(&srv->lock, NULL);
	flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG;
	if (addr->ai_family == AF_INET6)
		flags |= MHD_USE_IPv6;
	srv->mhd = MHD_start_daemon(flags, 0, NULL, NULL, handle, srv,
				    MHD_OPTION_SOCK_ADDR, addr->ai_addr,
				    MHD_OPTION_CONNECTION_LIMIT, 32U,
				    MHD_OPTION_CONNECTION_TIMEOUT, 10U,
				    MHD_OPTION_END);
	if (!srv->mhd) {
		ret = errno ? errno : EADDRINUSE;
		/* A port below 1024 without CAP_NET_BIND_SERVICE. */
		snprintf(err, len, "--metrics %s: cannot listen (%s)%s", listen,
			 strerror(ret), ret == EACCES ? " (a port below 1024 "
			 "needs CAP_NET_BIND_SERVICE)" : "");
		pthread_mutex_destroy(&srv->lock);
		free(srv);
		srv = NULL;
		errno = ret;
	}
free_addr:
	freeaddrinfo(addr);
	return srv;
}

int xrl_metrics_server_policy(struct xrl_metrics_server *srv,
			      const struct xrl_policy *policy,
			      uint64_t generation, time_t applied)
{
	struct rule_name *rules;
	size_t i;

	rules = calloc(policy->n_rules ? policy->n_rules : 1, sizeof(*rules));
	if (!rules)
		return -ENOMEM;
	for (i = 0; i < policy->n_rules; i++) {
		rules[i].id = policy->rules[i].id;
		rules[i].monitor = policy->rules[i].action == XRL_ACTION_MONITOR;
		rules[i].escalates = policy->rules[i].ban.escalate.after != 0;
		snprintf(rules[i].name, sizeof(rules[i].name), "%s",
			 policy->rules[i].name);
	}
	pthread_mutex_lock(&srv->lock);
	free(srv->rules);
	srv->rules = rules;
	srv->n_rules = policy->n_rules;
	srv->have_policy = true;
	srv->generation = generation;
	srv->applied = applied;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

int xrl_metrics_server_health(struct xrl_metrics_server *srv,
			      char *const *ifaces, size_t n_ifaces,
			      __u32 head_map_id)
{
	char (*names)[IF_NAMESIZE];
	size_t i;

	names = calloc(n_ifaces ? n_ifaces : 1, sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (i = 0; i < n_ifaces; i++)
		snprintf(names[i], sizeof(names[i]), "%s", ifaces[i]);
	pthread_mutex_lock(&srv->lock);
	free(srv->ifaces);
	srv->ifaces = names;
	srv->n_ifaces = n_ifaces;
	srv->head_map_id = head_map_id;
	pthread_mutex_unlock(&srv->lock);
	return 0;
}

void xrl_metrics_server_reload(struct xrl_metrics_server *srv, time_t at,
			       bool ok)
{
	pthread_mutex_lock(&srv->lock);
	srv->reload_at = at;
	srv->reload_ok = ok;
	pthread_mutex_unlock(&srv->lock);
}

void xrl_metrics_server_extra(struct xrl_metrics_server *srv,
			      xrl_metrics_extra_fn fn, void *ctx)
{
	pthread_mutex_lock(&srv->lock);
	srv->extra = fn;
	srv->extra_ctx = ctx;
	pthread_mutex_unlock(&srv->lock);
}

void xrl_metrics_server_degraded(struct xrl_metrics_server *srv,
				 xrl_health_degraded_fn fn, void *ctx)
{
	pthread_mutex_lock(&srv->lock);
	srv->degraded = fn;
	srv->degraded_ctx = ctx;
	pthread_mutex_unlock(&srv->lock);
}

void xrl_metrics_server_stop(struct xrl_metrics_server *srv)
{
	if (!srv)
		return;
	MHD_stop_daemon(srv->mhd);
	pthread_mutex_destroy(&srv->lock);
	free(srv->rules);
	free(srv->ifaces);
	free(srv);
}
