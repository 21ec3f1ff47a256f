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
#include <microhttpd.h>
#include "datapath.h"
#include "mapwalk.h"
#include "metrics_collect.h"
#include "metrics_http.h"
#include "policy.h"

struct rule_name {
	__u32 id;
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
 * Evictions are inserts minus the count; a stale count makes them look
 * higher, then lower again, so the counter keeps its highest value.
 */
static void add_table(struct xrl_metrics_server *srv, struct xrl_metrics *m)
{
	__u64 inserts = m->table.events[XRL_TABLE_INSERT];

	if (srv->tracked_sources >= 0 &&
	    inserts > (__u64)srv->tracked_sources &&
	    inserts - srv->tracked_sources > srv->evictions)
		srv->evictions = inserts - srv->tracked_sources;
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
	}
	m.n_rules = srv->n_rules;
	m.have_policy = srv->have_policy;
	m.generation = srv->generation;
	m.reload_time = srv->applied;
	m.extra = srv->extra;
	m.extra_ctx = srv->extra_ctx;
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

static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
			     const char *text)
{
	struct MHD_Response *response;
	enum MHD_Result ret;

	response = MHD_create_response_from_buffer(strlen(text), (void *)text,
						   MHD_RESPMEM_PERSISTENT);
	if (!response)
		return MHD_NO;
	MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE,
				"text/plain; charset=utf-8");
	ret = MHD_queue_response(conn, status, response);
	MHD_destroy_response(response);
	return ret;
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
			     "only GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply(conn, MHD_HTTP_NOT_FOUND, "see /metrics\n");
	text = scrape(srv, &len);
	if (!text)
		return reply(conn, MHD_HTTP_INTERNAL_SERVER_ERROR,
			     "reading the counters failed\n");
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
		snprintf(err, len, "--metrics %s: cannot listen (%s)", listen,
			 strerror(ret));
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

void xrl_metrics_server_extra(struct xrl_metrics_server *srv,
			      xrl_metrics_extra_fn fn, void *ctx)
{
	pthread_mutex_lock(&srv->lock);
	srv->extra = fn;
	srv->extra_ctx = ctx;
	pthread_mutex_unlock(&srv->lock);
}

void xrl_metrics_server_stop(struct xrl_metrics_server *srv)
{
	if (!srv)
		return;
	MHD_stop_daemon(srv->mhd);
	pthread_mutex_destroy(&srv->lock);
	free(srv->rules);
	free(srv);
}
