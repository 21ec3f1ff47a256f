/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * daemon.h - xdp-ratelimitd run as a child of the test, against a data
 * path the test loaded (with the test clock) and pinned in a directory
 * of its own; requests sent through the client library.
 */
#ifndef XRL_TEST_DAEMON_H
#define XRL_TEST_DAEMON_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <jansson.h>
#include "datapath.h"

#define DAEMON_BIN "build/xdp-ratelimitd"

struct daemon_env {
	char dir[256];		/* /tmp/xrl-daemon-<pid>: files */
	char pin_dir[PATH_MAX];		/* /sys/fs/bpf/xrl-daemon-<pid> */
	char socket[PATH_MAX];
	char config[PATH_MAX];
	char log[PATH_MAX];		/* the daemon's stderr */
	pid_t pid;			/* the daemon, or 0 */
	const char *netns;		/* run it in this namespace, or NULL */
	struct xrl_datapath dp;		/* the test's own handle on it */
	bool loaded;
};

/* Makes the paths, loads the program with the test clock and pins it. */
void env_setup(struct daemon_env *env);
/* Kills the daemon (by pid), removes pins, files and directories. */
void env_teardown(struct daemon_env *env);

/*
 * Runs build/xdp-ratelimit with @args on the env's pin dir (and its
 * socket, when @with_socket); stdout and stderr land in @out. Returns the
 * exit code.
 */
int env_cli(struct daemon_env *env, char *out, size_t len, const char *args,
	    bool with_socket);

/* Writes @yaml as the config file (or as @path when not NULL). */
void env_write(struct daemon_env *env, const char *path, const char *yaml);

/*
 * Starts the daemon on the env's config, socket and pins, with the extra
 * arguments (NULL-ended), and waits until it answers. Returns its pid.
 */
pid_t daemon_start(struct daemon_env *env, ...);
/* Starts it and waits for it to exit (it is expected to fail), at most
 * 20 s (then kills it and fails the test); returns the exit status. */
int daemon_run_to_exit(struct daemon_env *env, ...);
/* Sends @sig and waits for the exit; returns the wait status. */
int daemon_stop(struct daemon_env *env, int sig);

/* Sends a request (JSON text); returns the response object; asserts it
 * has "ok" true. */
json_t *request_ok(struct daemon_env *env, const char *fmt, ...);
/* Sends a request expected to fail; returns the "error" text (static). */
const char *request_fail(struct daemon_env *env, const char *fmt, ...);

/* The policy in force, as bytes: the rules map's entries sorted by key,
 * then the settings. Compare two with dump_equal. */
/* The classifier in force, entry by entry (its meta and split markers
 * too), and the settings: two dumps are equal when nothing changed. */
struct policy_dump {
	unsigned char *bytes;
	size_t len;
	size_t n_entries;
	size_t n_rules;		/* of the entries, the rules */
};
void dump_policy(struct daemon_env *env, struct policy_dump *dump);
bool dump_equal(const struct policy_dump *a, const struct policy_dump *b);
void dump_free(struct policy_dump *dump);

/* The daemon's log so far (static). */
const char *daemon_log(struct daemon_env *env);
/* Whether the daemon's log holds @text. */
bool log_contains(struct daemon_env *env, const char *text);

/* Connects to the daemon's socket; returns the fd. */
int raw_connect(struct daemon_env *env);
/* Reads one line (up to @len - 1 bytes) with a timeout; returns its length,
 * 0 at end of stream (or reset), -1 on timeout or error. */
ssize_t raw_read_line(int fd, char *buf, size_t len, int timeout_ms);

#endif
