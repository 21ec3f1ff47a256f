/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * server.h - the daemon's event loop: the control socket, its clients and
 * the signals, all in one epoll, one thread.
 */
#ifndef XRL_SERVER_H
#define XRL_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct xrl_daemon_state;

#define XRL_IDLE_TIMEOUT_MS	30000
#define XRL_MAX_CLIENTS		256

/* Another fd the loop watches (the limit events' ring), and its handler. */
struct xrl_server_watch {
	int fd;
	void (*ready)(void *ctx);
	void *ctx;
};

#define XRL_SERVER_WATCHES	4

struct xrl_server_opts {
	const char *socket_path;
	bool has_group;		/* open the socket to group @group too */
	gid_t group;
	const char *group_name;	/* as given, for messages */
	int idle_timeout_ms;	/* clients silent this long are dropped */
	size_t max_clients;
	struct xrl_server_watch watches[XRL_SERVER_WATCHES];
	size_t n_watches;
};

/*
 * Creates the listening socket at @opts->socket_path: mode 0600 (0660
 * with a group), owned by this user. A stale socket is replaced; one that
 * a live daemon answers on is not (-EADDRINUSE). Returns the fd or -errno
 * with @err set.
 */
int xrl_server_listen(const struct xrl_server_opts *opts, char *err,
		      size_t len);

/*
 * Blocks SIGHUP, SIGTERM and SIGINT for the calling thread (do it before
 * starting others) so that xrl_server_run receives them via signalfd.
 */
int xrl_server_block_signals(void);

/*
 * Serves requests on @listen_fd until SIGTERM or SIGINT; SIGHUP reloads
 * the config file. Returns 0 on such a stop, -errno when the loop itself
 * failed. Closes @listen_fd and removes the socket file.
 */
int xrl_server_run(struct xrl_daemon_state *state,
		   const struct xrl_server_opts *opts, int listen_fd);

#endif
