// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * server.c - one thread, one epoll: the listening socket, a signalfd and
 * every client. Each client has its own input buffer (one line of at most
 * XRL_CONTROL_LINE_MAX bytes) and output buffer; a client is served one
 * request at a time, so a slow reader holds back only itself. Clients
 * that send a line too long, or stay silent past the idle timeout, are
 * dropped; a half line left at disconnect is discarded. The loop's
 * timeout also wakes it when a ban by hand ends, to lift it. A reload's
 * file is read on a thread (file_load.h): the client that asked waits
 * for its answer while the others are served.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include "budget.h"
#include "clock.h"
#include "control.h"
#include "file_load.h"
#include "log.h"
#include "manual_bans.h"
#include "notify.h"
#include "server.h"

/* One line and its newline. */
#define INPUT_MAX (XRL_CONTROL_LINE_MAX + 1)

struct client {
	int fd;
	pid_t pid;
	uid_t uid;
	bool privileged;
	bool eof;		/* the peer sent all it will */
	bool closing;		/* close once the output is written */
	bool waiting;		/* for its reload's file to be read */
	bool unwatched;		/* out of the epoll while it waits */
	char *in;		/* INPUT_MAX bytes */
	size_t in_len;
	char *out;
	size_t out_len, out_sent;
	long long last_active_ms;
	struct client *next;
};

struct server {
	struct xrl_daemon_state *state;
	const struct xrl_server_opts *opts;
	int epoll_fd, listen_fd, signal_fd;
	int sync_fd;		/* timerfd of the budget syncs, or -1 */
	struct client *clients;
	size_t n_clients;
	struct xrl_file_load load;	/* a reload's file, being read */
	bool reload_by_signal;		/* SIGHUP asked for it */
	struct client *reload_client;	/* who asked for it, or NULL */
	bool sighup_pending;		/* another SIGHUP came meanwhile */
	bool stop;
};

/* epoll tags for the fds that are not clients. */
static char listen_tag, signal_tag, sync_tag, load_tag;

static long long now_ms(void)
{
	return (long long)(xrl_clock_ns(CLOCK_MONOTONIC) / XRL_NS_PER_MS);
}

static int make_socket_dir(const char *path)
{
	char dir[PATH_MAX];
	char *slash;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (!slash || slash == dir)
		return 0;
	*slash = '\0';
	if (mkdir(dir, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

/* A socket file left by a daemon that died: nobody answers on it. */
static int remove_stale_socket(const struct sockaddr_un *addr, char *err,
			       size_t len)
{
	struct stat st;
	int fd, ret;

	if (lstat(addr->sun_path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "%s exists and is not a socket",
			 addr->sun_path);
		return -EEXIST;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = connect(fd, (const struct sockaddr *)addr, sizeof(*addr));
	close(fd);
	if (!ret) {
		snprintf(err, len, "another daemon is listening on %s",
			 addr->sun_path);
		return -EADDRINUSE;
	}
	if (unlink(addr->sun_path) && errno != ENOENT)
		return -errno;
	return 0;
}

int xrl_server_listen(const struct xrl_server_opts *opts, char *err,
		      size_t len)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	mode_t old_umask;
	int fd, ret;

	if (strlen(opts->socket_path) >= sizeof(addr.sun_path)) {
		snprintf(err, len, "socket path %s is too long",
			 opts->socket_path);
		return -ENAMETOOLONG;
	}
	strcpy(addr.sun_path, opts->socket_path);
	ret = make_socket_dir(opts->socket_path);
	if (ret) {
		snprintf(err, len, "creating the directory of %s: %s",
			 opts->socket_path, strerror(-ret));
		return ret;
	}
	err[0] = '\0';
	ret = remove_stale_socket(&addr, err, len);
	if (ret) {
		if (!err[0])
			snprintf(err, len, "%s: %s", opts->socket_path,
				 strerror(-ret));
		return ret;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		ret = -errno;
		goto fail;
	}
	/* Never reachable by others, not even between bind and chmod. */
	old_umask = umask(0177);
	ret = bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	umask(old_umask);
	if (ret) {
		ret = -errno;
		goto close_fd;
	}
	if (opts->has_group && (chown(addr.sun_path, -1, opts->group) ||
				chmod(addr.sun_path, 0660))) {
		ret = -errno;
		unlink(addr.sun_path);
		close(fd);
		/* Root without CAP_CHOWN (a unit's bounding set) gets
		 * EPERM for a group it is not in. */
		snprintf(err, len, "--socket-group %s: giving %s to that "
			 "group: %s%s", opts->group_name, opts->socket_path,
			 strerror(-ret), ret == -EPERM ? " (needs CAP_CHOWN)" :
			 "");
		return ret;
	}
	if (listen(fd, 64)) {
		ret = -errno;
		goto unlink_socket;
	}
	return fd;

unlink_socket:
	unlink(addr.sun_path);
close_fd:
	close(fd);
fail:
	snprintf(err, len, "listening on %s: %s", opts->socket_path,
		 strerror(-ret));
	return ret;
}

static sigset_t handled_signals(void)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	return set;
}

int xrl_server_block_signals(void)
{
	sigset_t set = handled_signals();

	/* Writes to a client that left must fail, not kill the daemon. */
	signal(SIGPIPE, SIG_IGN);
	return -pthread_sigmask(SIG_BLOCK, &set, NULL);
}

static bool in_group(uid_t uid, gid_t gid, gid_t group)
{
	gid_t groups[256];
	int n = 256, i;
	struct passwd *pw;

	if (gid == group)
		return true;
	pw = getpwuid(uid);
	if (!pw || getgrouplist(pw->pw_name, gid, groups, &n) < 0)
		return false;
	for (i = 0; i < n; i++)
		if (groups[i] == group)
			return true;
	return false;
}

static void drop_client(struct server *srv, struct client *client,
			const char *why)
{
	struct client **link;

	if (why)
		pr_info("client pid %d: %s", (int)client->pid, why);
	if (srv->reload_client == client)
		srv->reload_client = NULL;	/* applied all the same */
	for (link = &srv->clients; *link; link = &(*link)->next) {
		if (*link == client) {
			*link = client->next;
			break;
		}
	}
	epoll_ctl(srv->epoll_fd, EPOLL_CTL_DEL, client->fd, NULL);
	close(client->fd);
	free(client->in);
	free(client->out);
	free(client);
	srv->n_clients--;
	srv->state->n_clients = srv->n_clients;
}

/* Waits for input, or for room to write when output is pending; for
 * neither while its reload is read (its next lines wait in the socket). */
static int watch_client(struct server *srv, struct client *client, int op)
{
	struct epoll_event ev = { .data.ptr = client };

	ev.events = client->out_len > client->out_sent ? EPOLLOUT :
		    client->eof || client->closing || client->waiting ? 0 :
		    EPOLLIN;
	if (epoll_ctl(srv->epoll_fd, op, client->fd, &ev))
		return -errno;
	return 0;
}

static int queue_response(struct client *client, const char *text)
{
	size_t text_len = strlen(text);
	char *out;

	out = realloc(client->out, client->out_len + text_len + 1);
	if (!out)
		return -ENOMEM;
	memcpy(out + client->out_len, text, text_len);
	out[client->out_len + text_len] = '\n';
	client->out = out;
	client->out_len += text_len + 1;
	return 0;
}

/* Sends what it can. 1 when all is sent, 0 when the socket is full. */
static int flush_client(struct client *client)
{
	ssize_t sent;

	while (client->out_sent < client->out_len) {
		sent = send(client->fd, client->out + client->out_sent,
			    client->out_len - client->out_sent,
			    MSG_NOSIGNAL | MSG_DONTWAIT);
		if (sent < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return 0;
			if (errno == EINTR)
				continue;
			return -errno;
		}
		client->out_sent += sent;
		client->last_active_ms = now_ms();
	}
	free(client->out);
	client->out = NULL;
	client->out_len = client->out_sent = 0;
	return 1;
}

/* Handles the first complete line of the input, if there is one. */
static int serve_one_line(struct server *srv, struct client *client)
{
	char *newline, *response;
	size_t line_len;
	int ret;

	newline = memchr(client->in, '\n', client->in_len);
	if (!newline)
		return 0;
	line_len = newline - client->in;
	ret = xrl_control_handle(srv->state, client->privileged, client->in,
				 line_len, &response);
	if (ret < 0)
		return ret;
	if (ret != XRL_CONTROL_LATER)
		ret = queue_response(client, response);
	free(response);
	client->in_len -= line_len + 1;
	memmove(client->in, newline + 1, client->in_len);
	if (ret == XRL_CONTROL_LATER) {
		client->waiting = true;
		srv->reload_client = client;
		return 0;
	}
	return ret ? ret : 1;
}

/*
 * Serves the lines buffered so far, one at a time: the next is taken only
 * once the response to the last is sent. Then decides what to wait for.
 */
static void advance_client(struct server *srv, struct client *client)
{
	int ret = 1;

	while (ret > 0) {
		ret = flush_client(client);
		if (ret < 0) {
			drop_client(srv, client, "gone while answered");
			return;
		}
		if (ret == 0 || client->closing || client->waiting)
			break;
		ret = serve_one_line(srv, client);
		if (ret < 0) {
			drop_client(srv, client, "out of memory");
			return;
		}
	}
	if (!client->in_len || !memchr(client->in, '\n', client->in_len)) {
		if (client->in_len >= INPUT_MAX && !client->closing) {
			char msg[128];

			snprintf(msg, sizeof(msg), "{\"ok\":false,\"error\":"
				 "\"request line over %d bytes\"}",
				 XRL_CONTROL_LINE_MAX);
			client->closing = true;
			client->in_len = 0;
			if (queue_response(client, msg) ||
			    flush_client(client) < 0) {
				drop_client(srv, client, "line too long");
				return;
			}
			pr_warn("client pid %d: line too long",
				(int)client->pid);
		}
	}
	if (client->waiting && client->eof) {
		/* Its hangup would wake the loop until the answer. */
		if (!client->unwatched)
			epoll_ctl(srv->epoll_fd, EPOLL_CTL_DEL, client->fd,
				  NULL);
		client->unwatched = true;
		return;
	}
	if (!client->waiting && client->out_len == client->out_sent &&
	    (client->closing || client->eof)) {
		drop_client(srv, client, NULL);
		return;
	}
	if (watch_client(srv, client, client->unwatched ? EPOLL_CTL_ADD :
			 EPOLL_CTL_MOD))
		drop_client(srv, client, "epoll failed");
	else
		client->unwatched = false;
}

static void read_client(struct server *srv, struct client *client)
{
	ssize_t got;

	while (client->in_len < INPUT_MAX) {
		got = recv(client->fd, client->in + client->in_len,
			   INPUT_MAX - client->in_len, MSG_DONTWAIT);
		if (got > 0) {
			client->in_len += got;
			client->last_active_ms = now_ms();
			/* Serve before reading more than one line ahead. */
			if (memchr(client->in + client->in_len - got, '\n',
				   got))
				break;
			continue;
		}
		if (got == 0) {
			client->eof = true;	/* a half line is dropped */
			break;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			drop_client(srv, client, "read failed");
			return;
		}
		break;
	}
	advance_client(srv, client);
}

static void refuse_connection(int fd, const char *why)
{
	char msg[256];

	snprintf(msg, sizeof(msg), "{\"ok\":false,\"error\":\"%s\"}\n", why);
	send(fd, msg, strlen(msg), MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
}

/*
 * Full: the client idle the longest (nothing half-read, nothing left to
 * send) makes room, so idle connections cannot lock out one that has a
 * request. False when every client is busy.
 */
static bool drop_idlest(struct server *srv)
{
	struct client *client, *idlest = NULL;

	for (client = srv->clients; client; client = client->next)
		if (!client->in_len && client->out_sent == client->out_len &&
		    !client->waiting && (!idlest ||
		     client->last_active_ms < idlest->last_active_ms))
			idlest = client;
	if (!idlest)
		return false;
	drop_client(srv, idlest, "idle, to make room for a new client");
	return true;
}

static void accept_client(struct server *srv)
{
	struct ucred cred;
	socklen_t cred_len = sizeof(cred);
	struct client *client;
	int fd;

	fd = accept4(srv->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (fd < 0) {
		if (errno != EAGAIN && errno != EINTR)
			pr_warn("accept: %s", strerror(errno));
		return;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len)) {
		pr_warn("SO_PEERCRED: %s", strerror(errno));
		close(fd);
		return;
	}
	if (cred.uid != 0 && cred.uid != geteuid() &&
	    !(srv->opts->has_group &&
	      in_group(cred.uid, cred.gid, srv->opts->group))) {
		pr_warn("refused client pid %d uid %u: not allowed",
			(int)cred.pid, (unsigned)cred.uid);
		refuse_connection(fd, "permission denied");
		return;
	}
	if (srv->n_clients >= srv->opts->max_clients &&
	    !drop_idlest(srv)) {
		pr_warn("refused client pid %d: %zu clients already, all "
			"busy", (int)cred.pid, srv->n_clients);
		refuse_connection(fd, "too many clients");
		return;
	}
	client = calloc(1, sizeof(*client));
	if (client)
		client->in = malloc(INPUT_MAX);
	if (!client || !client->in) {
		if (client)
			free(client);
		refuse_connection(fd, "out of memory");
		return;
	}
	client->fd = fd;
	client->pid = cred.pid;
	client->uid = cred.uid;
	client->privileged = cred.uid == 0 || cred.uid == geteuid();
	client->last_active_ms = now_ms();
	if (watch_client(srv, client, EPOLL_CTL_ADD)) {
		free(client->in);
		free(client);
		close(fd);
		return;
	}
	client->next = srv->clients;
	srv->clients = client;
	srv->n_clients++;
	srv->state->n_clients = srv->n_clients;
	pr_debug("client pid %d uid %u connected", (int)cred.pid,
		 (unsigned)cred.uid);
}

/* A SIGHUP's reload, started (its file read off the loop). */
static void start_signal_reload(struct server *srv)
{
	char err[1024], why[sizeof(err) + 16];

	xrl_notify_reloading();
	if (!xrl_daemon_reload_start(srv->state, NULL, err, sizeof(err))) {
		srv->reload_by_signal = true;
		return;
	}
	snprintf(why, sizeof(why), "SIGHUP: %s", err);
	xrl_daemon_refused(srv->state, why);
	xrl_notify_ready(srv->state);
}

static void handle_signal(struct server *srv)
{
	struct signalfd_siginfo info;

	if (read(srv->signal_fd, &info, sizeof(info)) != sizeof(info))
		return;
	if (info.ssi_signo != SIGHUP) {
		pr_info("signal %d: stopping", (int)info.ssi_signo);
		srv->stop = true;
		return;
	}
	if (srv->load.running) {
		pr_info("SIGHUP: a reload of %s is being read; reloading "
			"again after it", srv->load.path);
		srv->sighup_pending = true;
		return;
	}
	start_signal_reload(srv);
}

static void finish_signal_reload(struct server *srv)
{
	char err[1024], why[sizeof(err) + 16];

	srv->reload_by_signal = false;
	if (xrl_daemon_reload_finish(srv->state, NULL, err, sizeof(err))) {
		snprintf(why, sizeof(why), "SIGHUP: %s", err);
		xrl_daemon_refused(srv->state, why);
	} else
		pr_info("SIGHUP: reloaded %s: %s", srv->load.path,
			xrl_daemon_reload_words(srv->state, err, sizeof(err)));
	/* Refused or not, the daemon runs on: ready again. */
	xrl_notify_ready(srv->state);
}

/* The client's reload, answered (when the client is still there). */
static void finish_client_reload(struct server *srv)
{
	struct client *client = srv->reload_client;
	char *response;
	int ret;

	srv->reload_client = NULL;
	ret = xrl_control_reload_response(srv->state, &response);
	if (!client) {
		free(response);
		return;
	}
	client->waiting = false;
	if (!ret)
		ret = queue_response(client, response);
	free(response);
	if (ret) {
		drop_client(srv, client, "out of memory");
		return;
	}
	advance_client(srv, client);
}

/* The file of a reload is read: applied or refused, and answered. */
static void reload_read(struct server *srv)
{
	if (!srv->load.running)
		return;
	if (srv->reload_by_signal)
		finish_signal_reload(srv);
	else
		finish_client_reload(srv);
	if (srv->sighup_pending) {
		srv->sighup_pending = false;
		start_signal_reload(srv);
	}
}

/* Drops the clients silent past the timeout; returns ms to the next one. */
static int expire_idle_clients(struct server *srv)
{
	long long now = now_ms(), idle, next = -1;
	struct client *client, *after;

	if (srv->opts->idle_timeout_ms <= 0)
		return -1;
	for (client = srv->clients; client; client = after) {
		after = client->next;
		if (client->waiting)
			continue;	/* on the daemon, not idle */
		idle = now - client->last_active_ms;
		if (idle >= srv->opts->idle_timeout_ms) {
			drop_client(srv, client, "idle timeout");
			continue;
		}
		if (next < 0 || srv->opts->idle_timeout_ms - idle < next)
			next = srv->opts->idle_timeout_ms - idle;
	}
	return next;
}

/* The nearer of two epoll timeouts (ms; -1: none). */
static int soonest(int a, int b)
{
	if (a < 0)
		return b;
	return b < 0 || a < b ? a : b;
}

static bool client_listed(const struct server *srv, const void *ptr)
{
	const struct client *client;

	for (client = srv->clients; client; client = client->next)
		if (client == ptr)
			return true;
	return false;
}

static int add_watch(struct server *srv, int fd, void *tag)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = tag };

	return epoll_ctl(srv->epoll_fd, EPOLL_CTL_ADD, fd, &ev) ? -errno : 0;
}

/* A timerfd ticking every sync_interval, when there are budgets. */
static int start_sync_timer(struct server *srv)
{
	struct xrl_budgets *budgets = srv->state->budgets;
	struct itimerspec every = {};
	int ret;

	srv->sync_fd = -1;
	if (!budgets)
		return 0;
	srv->sync_fd = timerfd_create(CLOCK_MONOTONIC,
				      TFD_NONBLOCK | TFD_CLOEXEC);
	if (srv->sync_fd < 0)
		return -errno;
	every.it_interval.tv_sec = budgets->interval_ns / 1000000000ULL;
	every.it_interval.tv_nsec = budgets->interval_ns % 1000000000ULL;
	every.it_value = every.it_interval;
	if (timerfd_settime(srv->sync_fd, 0, &every, NULL))
		return -errno;
	ret = add_watch(srv, srv->sync_fd, &sync_tag);
	return ret;
}

/* One sync of the budgets; a failure is logged when it starts or changes,
 * not every interval. */
static void sync_budgets(struct server *srv)
{
	static int last_error;
	uint64_t ticks;
	int ret;

	if (read(srv->sync_fd, &ticks, sizeof(ticks)) != sizeof(ticks))
		return;
	ret = xrl_budgets_sync(srv->state->budgets, xrl_clock_ns(CLOCK_MONOTONIC));
	if (ret && ret != last_error)
		pr_warn("budget sync: %s", strerror(-ret));
	else if (!ret && last_error)
		pr_info("budget sync: working again");
	last_error = ret;
}

static const struct xrl_server_watch *find_watch(const struct server *srv,
						 const void *ptr)
{
	size_t i;

	for (i = 0; i < srv->opts->n_watches; i++)
		if (ptr == &srv->opts->watches[i])
			return &srv->opts->watches[i];
	return NULL;
}

static void dispatch(struct server *srv, const struct epoll_event *ev)
{
	const struct xrl_server_watch *watch = find_watch(srv, ev->data.ptr);
	struct client *client = ev->data.ptr;

	if (ev->data.ptr == &sync_tag) {
		sync_budgets(srv);
	} else if (ev->data.ptr == &load_tag) {
		reload_read(srv);
	} else if (watch) {
		watch->ready(watch->ctx);
	} else if (ev->data.ptr == &listen_tag) {
		accept_client(srv);
	} else if (ev->data.ptr == &signal_tag) {
		handle_signal(srv);
	} else if (ev->events & EPOLLOUT) {
		advance_client(srv, client);
	} else if (ev->events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
		read_client(srv, client);
	}
}

int xrl_server_run(struct xrl_daemon_state *state,
		   const struct xrl_server_opts *opts, int listen_fd)
{
	struct server srv = {
		.state = state,
		.opts = opts,
		.listen_fd = listen_fd,
		.signal_fd = -1,
		.sync_fd = -1,
	};
	struct epoll_event events[32];
	sigset_t set = handled_signals();
	int ret, n, i, timeout;
	size_t w;

	srv.epoll_fd = epoll_create1(EPOLL_CLOEXEC);
	if (srv.epoll_fd < 0) {
		ret = -errno;
		goto close_listen;
	}
	srv.signal_fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
	if (srv.signal_fd < 0) {
		ret = -errno;
		goto close_epoll;
	}
	ret = xrl_file_load_init(&srv.load);
	if (ret)
		goto close_signal;
	state->load = &srv.load;
	ret = add_watch(&srv, listen_fd, &listen_tag);
	if (!ret)
		ret = add_watch(&srv, srv.load.done_fd, &load_tag);
	if (!ret)
		ret = add_watch(&srv, srv.signal_fd, &signal_tag);
	if (!ret)
		ret = start_sync_timer(&srv);
	for (w = 0; !ret && w < opts->n_watches; w++)
		ret = add_watch(&srv, opts->watches[w].fd,
				(void *)&opts->watches[w]);
	if (ret)
		goto close_sync;

	while (!srv.stop) {
		timeout = soonest(expire_idle_clients(&srv),
				  xrl_daemon_expire_bans(state));
		n = epoll_wait(srv.epoll_fd, events, 32, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			ret = -errno;
			break;
		}
		/* Only clients still listed: one dropped while handling an
		 * earlier event of the batch is gone. */
		for (i = 0; i < n; i++) {
			if (events[i].data.ptr != &listen_tag &&
			    events[i].data.ptr != &signal_tag &&
			    events[i].data.ptr != &sync_tag &&
			    events[i].data.ptr != &load_tag &&
			    !find_watch(&srv, events[i].data.ptr) &&
			    !client_listed(&srv, events[i].data.ptr))
				continue;
			dispatch(&srv, &events[i]);
		}
	}
	while (srv.clients)
		drop_client(&srv, srv.clients, NULL);
close_sync:
	if (srv.sync_fd >= 0)
		close(srv.sync_fd);
	/* A file still being read is waited for: its limits bound it. */
	state->load = NULL;
	xrl_file_load_free(&srv.load);
close_signal:
	close(srv.signal_fd);
close_epoll:
	close(srv.epoll_fd);
close_listen:
	close(listen_fd);
	unlink(opts->socket_path);
	return ret;
}
