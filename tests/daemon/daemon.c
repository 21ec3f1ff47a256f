// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "client.h"
#include "daemon.h"
#include "owner.h"
#include "fixture.h"
#include "loader.h"
#include "pin.h"

#define START_TIMEOUT_MS 20000

void env_setup(struct daemon_env *env)
{
	struct xrl_pin_dir dir;
	char err[512];
	int ret;

	memset(env, 0, sizeof(*env));
	snprintf(env->dir, sizeof(env->dir), "/tmp/xrl-daemon-%d", getpid());
	snprintf(env->pin_dir, sizeof(env->pin_dir),
		 "/sys/fs/bpf/xrl-daemon-%d", getpid());
	snprintf(env->socket, sizeof(env->socket), "%s/control.sock",
		 env->dir);
	snprintf(env->config, sizeof(env->config), "%s/policy.yaml", env->dir);
	snprintf(env->log, sizeof(env->log), "%s/daemon.log", env->dir);
	cr_assert_eq(mkdir(env->dir, 0700), 0, "mkdir %s: %s", env->dir,
		     strerror(errno));
	/* Mounts bpffs when needed and makes the directory. */
	ret = xrl_pin_dir_open(&dir, env->pin_dir, true, err, sizeof(err));
	cr_assert_eq(ret, 0, "%s", err);
	xrl_pin_dir_close(&dir);
	fixture_load(&env->dp, 0);
	env->loaded = true;
	ret = xrl_datapath_pin(&env->dp, env->pin_dir);
	cr_assert_eq(ret, 0, "pinning: %s", strerror(-ret));
}

static void remove_dir(const char *path)
{
	char file[PATH_MAX * 2];
	struct dirent *entry;
	DIR *dir = opendir(path);

	if (!dir)
		return;
	while ((entry = readdir(dir))) {
		if (!strcmp(entry->d_name, ".") || !strcmp(entry->d_name, ".."))
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, entry->d_name);
		if (unlink(file) && errno == EISDIR)
			remove_dir(file);	/* one a test made */
	}
	closedir(dir);
	rmdir(path);
}

void env_teardown(struct daemon_env *env)
{
	char record[PATH_MAX];

	if (env->pid > 0)
		daemon_stop(env, SIGKILL);
	/* A daemon killed leaves its owner record (held by nobody now). */
	if (!xrl_owner_record_path(env->pin_dir, record, sizeof(record)))
		unlink(record);
	if (env->loaded) {
		xrl_datapath_unpin(&env->dp);
		xrl_datapath_close(&env->dp);
		env->loaded = false;
	}
	remove_dir(env->pin_dir);
	remove_dir(env->dir);
}

void env_write(struct daemon_env *env, const char *path, const char *yaml)
{
	char tmp[PATH_MAX + 8];
	FILE *f;

	path = path ? path : env->config;
	/* Whole or not at all, as an editor would: the daemon may read it. */
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	cr_assert_not_null(f, "%s: %s", tmp, strerror(errno));
	cr_assert_eq(fputs(yaml, f) < 0, 0);
	cr_assert_eq(fclose(f), 0);
	cr_assert_eq(rename(tmp, path), 0);
}

static pid_t spawn(struct daemon_env *env, va_list ap)
{
	const char *argv[34];
	char netns_arg[64];
	size_t argc = 0;
	const char *arg;

	/* nsenter execs the daemon: the pid stays the daemon's, and the
	 * host's /sys/fs/bpf stays (ip netns exec would remount /sys). */
	if (env->netns) {
		snprintf(netns_arg, sizeof(netns_arg), "--net=/run/netns/%s",
			 env->netns);
		argv[argc++] = "/usr/bin/nsenter";
		argv[argc++] = netns_arg;
	}
	argv[argc++] = DAEMON_BIN;
	argv[argc++] = "--config";
	argv[argc++] = env->config;
	argv[argc++] = "--socket";
	argv[argc++] = env->socket;
	argv[argc++] = "--pin-dir";
	argv[argc++] = env->pin_dir;
	pid_t pid;
	int fd;

	while ((arg = va_arg(ap, const char *)) && argc < 33)
		argv[argc++] = arg;
	argv[argc] = NULL;
	pid = fork();
	cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
	if (pid == 0) {
		/* The daemon dies with the test, even one that crashes. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		/* Its state files in the test's directory, never /var/lib. */
		setenv("XDP_RATELIMIT_STATE_DIR", env->dir, 1);
		fd = open(env->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	return pid;
}

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000LL + ts.tv_nsec / 1000000;
}

const char *daemon_log(struct daemon_env *env)
{
	static char text[65536];
	ssize_t n;
	int fd;

	text[0] = '\0';
	fd = open(env->log, O_RDONLY);
	if (fd < 0)
		return text;
	n = read(fd, text, sizeof(text) - 1);
	text[n > 0 ? n : 0] = '\0';
	close(fd);
	return text;
}

bool log_contains(struct daemon_env *env, const char *text)
{
	return strstr(daemon_log(env), text) != NULL;
}

pid_t daemon_start(struct daemon_env *env, ...)
{
	long long deadline = now_ms() + START_TIMEOUT_MS;
	char *response, err[512];
	int status;
	va_list ap;

	va_start(ap, env);
	env->pid = spawn(env, ap);
	va_end(ap);
	/* Ready when it answers; a daemon that exits fails the test. */
	while (now_ms() < deadline) {
		if (waitpid(env->pid, &status, WNOHANG) == env->pid) {
			env->pid = 0;
			cr_assert_fail("the daemon exited (status %d): %s",
				       status, daemon_log(env));
		}
		if (!xrl_client_request(env->socket, "{\"cmd\":\"version\"}",
					&response, err, sizeof(err))) {
			free(response);
			return env->pid;
		}
		poll(NULL, 0, 10);
	}
	cr_assert_fail("the daemon did not answer within %d ms: %s",
		       START_TIMEOUT_MS, daemon_log(env));
	return -1;
}

int daemon_run_to_exit(struct daemon_env *env, ...)
{
	long long deadline = now_ms() + START_TIMEOUT_MS;
	int status;
	va_list ap;
	pid_t pid;

	va_start(ap, env);
	pid = spawn(env, ap);
	va_end(ap);
	/* Bounded: a daemon that hangs is killed and fails the test. */
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			cr_assert_fail("the daemon did not exit within %d ms: %s",
				       START_TIMEOUT_MS, daemon_log(env));
		}
		poll(NULL, 0, 5);
	}
	return status;
}

int daemon_stop(struct daemon_env *env, int sig)
{
	long long deadline = now_ms() + START_TIMEOUT_MS;
	int status = 0;
	pid_t pid = env->pid;

	if (pid <= 0)
		return 0;
	kill(pid, sig);
	while (waitpid(pid, &status, WNOHANG) != pid) {
		if (now_ms() > deadline) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			break;
		}
		poll(NULL, 0, 5);
	}
	env->pid = 0;
	return status;
}

static json_t *request_va(struct daemon_env *env, const char *fmt, va_list ap)
{
	char text[1 << 16], *response, err[1024];
	json_error_t jerr;
	json_t *json;
	int ret;

	vsnprintf(text, sizeof(text), fmt, ap);
	ret = xrl_client_request(env->socket, text, &response, err,
				 sizeof(err));
	cr_assert_eq(ret, 0, "request %s: %s", text, err);
	json = json_loads(response, 0, &jerr);
	cr_assert_not_null(json, "response to %s is not JSON: %s", text,
			   response);
	free(response);
	cr_assert(json_is_boolean(json_object_get(json, "ok")),
		  "response to %s has no \"ok\"", text);
	return json;
}

json_t *request_ok(struct daemon_env *env, const char *fmt, ...)
{
	json_t *json;
	va_list ap;

	va_start(ap, fmt);
	json = request_va(env, fmt, ap);
	va_end(ap);
	cr_assert(json_is_true(json_object_get(json, "ok")), "refused: %s",
		  json_string_value(json_object_get(json, "error")));
	return json;
}

const char *request_fail(struct daemon_env *env, const char *fmt, ...)
{
	static char error[1024];
	json_t *json, *text;
	va_list ap;

	va_start(ap, fmt);
	json = request_va(env, fmt, ap);
	va_end(ap);
	cr_assert(json_is_false(json_object_get(json, "ok")),
		  "accepted: %s", fmt);
	text = json_object_get(json, "error");
	cr_assert(json_is_string(text) && json_string_length(text) > 0,
		  "a refusal without an error text");
	snprintf(error, sizeof(error), "%s", json_string_value(text));
	json_decref(json);
	return error;
}

#define ENTRY_SIZE (sizeof(struct xrl_rule_key) + sizeof(struct xrl_rule))

static int compare_entries(const void *a, const void *b)
{
	return memcmp(a, b, ENTRY_SIZE);
}

void dump_policy(struct daemon_env *env, struct policy_dump *dump)
{
	struct xrl_rule_key key, prev_key, *prev = NULL;
	struct xrl_settings settings;
	size_t cap = 1024;
	int fd;

	memset(dump, 0, sizeof(*dump));
	dump->bytes = malloc(cap * ENTRY_SIZE + sizeof(settings));
	cr_assert_not_null(dump->bytes);
	fd = xrl_datapath_rules_fd(&env->dp);
	cr_assert_geq(fd, 0, "rules map: %s", strerror(-fd));
	while (!bpf_map_get_next_key(fd, prev, &key)) {
		unsigned char *entry;

		if (dump->n_entries == cap) {
			cap *= 2;
			dump->bytes = realloc(dump->bytes,
					      cap * ENTRY_SIZE + sizeof(settings));
			cr_assert_not_null(dump->bytes);
		}
		entry = dump->bytes + dump->n_entries * ENTRY_SIZE;
		memcpy(entry, &key, sizeof(key));
		cr_assert_eq(bpf_map_lookup_elem(fd, &key, entry + sizeof(key)),
			     0, "lookup: %s", strerror(errno));
		prev_key = key;
		prev = &prev_key;
		dump->n_entries++;
		if (!(key.family & (XRL_KEY_META | XRL_KEY_SPLIT)))
			dump->n_rules++;
	}
	close(fd);
	qsort(dump->bytes, dump->n_entries, ENTRY_SIZE, compare_entries);
	cr_assert_eq(xrl_datapath_settings(&env->dp, &settings), 0);
	memcpy(dump->bytes + dump->n_entries * ENTRY_SIZE, &settings,
	       sizeof(settings));
	dump->len = dump->n_entries * ENTRY_SIZE + sizeof(settings);
}

bool dump_equal(const struct policy_dump *a, const struct policy_dump *b)
{
	return a->len == b->len && !memcmp(a->bytes, b->bytes, a->len);
}

void dump_free(struct policy_dump *dump)
{
	free(dump->bytes);
	memset(dump, 0, sizeof(*dump));
}

int raw_connect(struct daemon_env *env)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	cr_assert_geq(fd, 0);
	memcpy(addr.sun_path, env->socket, strnlen(env->socket, sizeof(addr.sun_path) - 1));
	cr_assert_eq(connect(fd, (struct sockaddr *)&addr, sizeof(addr)), 0,
		     "connect %s: %s", env->socket, strerror(errno));
	return fd;
}

ssize_t raw_read_line(int fd, char *buf, size_t len, int timeout_ms)
{
	long long deadline = now_ms() + timeout_ms;
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	size_t used = 0;
	ssize_t got;

	while (used + 1 < len) {
		long long left = deadline - now_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			return -1;
		got = recv(fd, buf + used, 1, 0);
		/* A peer that closes with our bytes unread resets. */
		if (got < 0 && errno == ECONNRESET)
			got = 0;
		if (got < 0)
			return -1;
		if (got == 0)
			break;
		if (buf[used] == '\n') {
			buf[used] = '\0';
			return used + 1;
		}
		used++;
	}
	buf[used] = '\0';
	return used;
}

int env_cli(struct daemon_env *env, char *out, size_t len, const char *args,
	    bool with_socket)
{
	char command[PATH_MAX * 4];
	size_t got;
	FILE *pipe;
	int status;

	snprintf(command, sizeof(command),
		 "build/xdp-ratelimit -P %s %s %s %s 2>&1", env->pin_dir, args,
		 with_socket ? "-S" : "", with_socket ? env->socket : "");
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	got = fread(out, 1, len - 1, pipe);
	out[got] = '\0';
	status = pclose(pipe);
	cr_assert(WIFEXITED(status), "%s did not exit", command);
	return WEXITSTATUS(status);
}
