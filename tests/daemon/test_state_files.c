// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The daemon's state files (policy.applied.yaml, policy.runtime.json,
 * policy.bans.json) against what someone plants in the state directory:
 * a link at a temporary copy is removed, never written through; a FIFO
 * or a link at a state file refuses the start at once, in one line; a
 * number out of range in a file refuses the start in one line naming the
 * file, the field and the value, and nothing of the file is applied.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include "clock.h"
#include "daemon.h"
#include "xrl.h"

static struct daemon_env env;
static char out[1 << 16];

/* A file rule under the prefixes the tests ban and add. */
static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\nrules:\n"
		  "  - name: net\n    cidr: 198.18.64.0/18\n    pps: 1k\n"
		  "    burst: 1k\n");
}

static void teardown(void)
{
	env_teardown(&env);
}

TestSuite(state_files_daemon, .init = setup, .fini = teardown,
	  .timeout = 120);

static void state_path(char *path, size_t len, const char *name)
{
	snprintf(path, len, "%s/%s", env.dir, name);
}

/* Lines of the daemon's log that hold @text. */
static int log_lines_with(const char *text)
{
	const char *at = daemon_log(&env);
	int n = 0;

	while ((at = strstr(at, text))) {
		n++;
		at = strchr(at, '\n') ?: at + strlen(at);
	}
	return n;
}

static void empty_log(void)
{
	cr_assert(!truncate(env.log, 0) || errno == ENOENT, "%s: %m",
		  env.log);
}

/* The start was refused within a few seconds, with @text in its one
 * error line. */
static void start_refused(const char *text)
{
	long long started = xrl_clock_ns(CLOCK_MONOTONIC) / XRL_NS_PER_MS;
	long long took;
	int status;

	empty_log();
	status = daemon_run_to_exit(&env, NULL);
	took = xrl_clock_ns(CLOCK_MONOTONIC) / XRL_NS_PER_MS - started;
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE,
		  "status %d: %s", status, daemon_log(&env));
	cr_assert_lt(took, 5000, "took %lld ms", took);
	cr_assert_eq(log_lines_with(text), 1, "no \"%s\" in: %s", text,
		     daemon_log(&env));
	cr_assert_eq(log_lines_with("error: "), 1, "one line: %s",
		     daemon_log(&env));
}

static long manual_ban_entries(void)
{
	struct xrl_manual_ban_key key, next;
	long n = 0;

	while (!bpf_map_get_next_key(env.dp.manual_bans_fd, n ? &key : NULL,
				     &next)) {
		key = next;
		n++;
	}
	return n;
}

Test(state_files_daemon, a_link_at_a_temporary_copy_is_removed_not_followed)
{
	static const char *const names[] = {
		"policy.bans.json", "policy.runtime.json", "policy.applied.yaml",
	};
	char target[PATH_MAX], tmp[PATH_MAX + 128], file[PATH_MAX], text[64];
	struct stat st;
	size_t i;
	ssize_t n;
	int fd;

	state_path(target, sizeof(target), "precious");
	env_write(&env, target, "precious\n");
	daemon_start(&env, NULL);
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(tmp, sizeof(tmp), "%s/%s.tmp", env.dir, names[i]);
		cr_assert_eq(symlink(target, tmp), 0, "%s: %m", tmp);
	}
	/* A ban writes the bans; a rule the overlay and the applied copy. */
	cr_assert_eq(env_cli(&env, out, sizeof(out),
			     "ban 198.18.70.0/24 --for 1h", true), 0, "%s", out);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "rule add 198.18.71.0/24 "
			     "--name lab --action deny", true), 0, "%s", out);

	fd = open(target, O_RDONLY);
	cr_assert_geq(fd, 0);
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	text[n > 0 ? n : 0] = '\0';
	cr_assert_str_eq(text, "precious\n", "the link's target was written");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		state_path(file, sizeof(file), names[i]);
		cr_assert_eq(lstat(file, &st), 0, "%s: %m", file);
		cr_assert(S_ISREG(st.st_mode), "%s is not a file", file);
		snprintf(tmp, sizeof(tmp), "%s.tmp", file);
		cr_assert_neq(lstat(tmp, &st), 0, "%s left behind", tmp);
		snprintf(tmp, sizeof(tmp), "%s.tmp: a symbolic link (not "
			 "followed) in place of the temporary copy: removed",
			 names[i]);
		cr_assert_eq(log_lines_with(tmp), 1, "no \"%s\" in: %s", tmp,
			     daemon_log(&env));
	}
	/* What was saved is what was asked, after a restart too. */
	daemon_stop(&env, SIGTERM);
	daemon_start(&env, NULL);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "bans", true), 0, "%s",
		     out);
	cr_assert_not_null(strstr(out, "198.18.70.0/24"), "%s", out);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "rule list", true), 0,
		     "%s", out);
	cr_assert_not_null(strstr(out, "198.18.71.0/24"), "%s", out);
}

Test(state_files_daemon, a_fifo_or_a_link_at_a_state_file_refuses_the_start)
{
	static const char *const names[] = {
		"policy.bans.json", "policy.runtime.json",
	};
	char file[PATH_MAX], said[PATH_MAX + 64], target[PATH_MAX];
	size_t i;

	state_path(target, sizeof(target), "elsewhere.json");
	env_write(&env, target, "{\"version\": 1, \"bans\": []}\n");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		state_path(file, sizeof(file), names[i]);
		/* Nobody writes into it: a read would wait for ever. */
		cr_assert_eq(mkfifo(file, 0600), 0, "%s: %m", file);
		snprintf(said, sizeof(said), "%s: a FIFO, not a regular file",
			 file);
		start_refused(said);
		cr_assert_eq(unlink(file), 0);

		cr_assert_eq(symlink(target, file), 0, "%s: %m", file);
		snprintf(said, sizeof(said), "%s: a symbolic link (not "
			 "followed)", file);
		start_refused(said);
		cr_assert_eq(unlink(file), 0);
	}
	/* Gone, the daemon starts. */
	daemon_start(&env, NULL);
}

Test(state_files_daemon, a_number_out_of_range_refuses_the_start_in_one_line)
{
	static const struct {
		const char *entry, *said;
	} bad[] = {
		{ "{\"cidr\": \"198.18.72.0/24\", \"until_ms\": "
		  "4611686018427387904}", "bans[1].until_ms: "
		  "4611686018427387904 is more than 31 days ahead" },
		{ "{\"cidr\": \"198.18.72.0/24\", \"until_ms\": -1}",
		  "bans[1].until_ms: -1 is before 1970" },
		{ "{\"cidr\": \"198.18.72.0/24\", \"until_ms\": \"soon\"}",
		  "bans[1]: not {\"cidr\": TEXT, \"until_ms\": N}" },
		{ "{\"cidr\": \"0.0.0.0/0\"}", "bans[1].cidr: \"0.0.0.0/0\" "
		  "would ban every source of its family" },
		{ "{\"cidr\": \"198.18.72.0/33\"}", "bans[1].cidr: " },
		{ "{\"cidr\": \"fd00::/129\"}", "bans[1].cidr: " },
	};
	char file[PATH_MAX], text[512], said[PATH_MAX + 128];
	size_t i;

	state_path(file, sizeof(file), "policy.bans.json");
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		/* A good entry before the bad one: nothing is applied. */
		snprintf(text, sizeof(text), "{\"version\": 1, \"bans\": ["
			 "{\"cidr\": \"198.18.73.0/24\"}, %s]}\n",
			 bad[i].entry);
		env_write(&env, file, text);
		snprintf(said, sizeof(said), "%s: %s", file, bad[i].said);
		start_refused(said);
		cr_assert_eq(manual_ban_entries(), 0, "%s", bad[i].entry);
	}
}

/* A ban saved by a daemon, for the starts refused after it to keep. */
static void save_a_ban(void)
{
	daemon_start(&env, NULL);
	cr_assert_eq(env_cli(&env, out, sizeof(out),
			     "ban 198.18.74.0/24 --for 1h", true), 0, "%s", out);
	daemon_stop(&env, SIGTERM);
}

static void ban_still_there(void)
{
	daemon_start(&env, NULL);
	cr_assert_eq(env_cli(&env, out, sizeof(out), "bans", true), 0, "%s",
		     out);
	cr_assert_not_null(strstr(out, "198.18.74.0/24"), "lost: %s", out);
}

Test(state_files_daemon, a_state_directory_others_could_write_refuses_the_start)
{
	char said[PATH_MAX + 128];

	save_a_ban();
	cr_assert_eq(chmod(env.dir, 0770), 0);
	snprintf(said, sizeof(said), "state directory %s: writable by its "
		 "group or others (mode 0770): chmod go-w it", env.dir);
	start_refused(said);
	cr_assert_eq(chmod(env.dir, 0702), 0);
	snprintf(said, sizeof(said), "state directory %s: writable by its "
		 "group or others (mode 0702)", env.dir);
	start_refused(said);

	cr_assert_eq(chmod(env.dir, 0700), 0);
	cr_assert_eq(chown(env.dir, 65534, 65534), 0, "%m");
	snprintf(said, sizeof(said), "state directory %s: owned by uid 65534,"
		 " not by the daemon's uid 0", env.dir);
	start_refused(said);
	cr_assert_eq(chown(env.dir, 0, 0), 0, "%m");

	/* Made right again: the ban was kept all along. */
	ban_still_there();
}

Test(state_files_daemon, a_state_directory_that_is_a_link_refuses_the_start)
{
	char real[PATH_MAX], link[PATH_MAX], state[PATH_MAX + 32];
	char said[PATH_MAX + 128];
	int status;

	state_path(real, sizeof(real), "real");
	state_path(link, sizeof(link), "link");
	cr_assert_eq(mkdir(real, 0700), 0);
	cr_assert_eq(symlink(real, link), 0);
	snprintf(state, sizeof(state), "%s/policy.applied.yaml", link);
	empty_log();
	status = daemon_run_to_exit(&env, "--state", state, NULL);
	cr_assert(WIFEXITED(status) && WEXITSTATUS(status) == EXIT_FAILURE,
		  "%s", daemon_log(&env));
	snprintf(said, sizeof(said), "state directory %s: a symbolic link "
		 "(not followed)", link);
	cr_assert_eq(log_lines_with(said), 1, "%s", daemon_log(&env));
	cr_assert_eq(log_lines_with("error: "), 1, "%s", daemon_log(&env));
	snprintf(state, sizeof(state), "%s/policy.bans.json", real);
	cr_assert_neq(access(state, F_OK), 0, "written through the link");
}

/* The daemon's --help and status: the default is the one under /var/lib,
 * and the environment's (the tests' own directory) replaces it. */
Test(state_files_daemon, the_state_files_are_under_var_lib_unless_told)
{
	char expect[PATH_MAX + 64];
	FILE *help;
	size_t n;
	json_t *status;

	help = popen(DAEMON_BIN " --help", "r");
	cr_assert_not_null(help);
	n = fread(out, 1, sizeof(out) - 1, help);
	out[n] = '\0';
	cr_assert_eq(pclose(help), 0);
	cr_assert_not_null(strstr(out, "/var/lib/xdp-ratelimit"), "%s", out);
	cr_assert_not_null(strstr(out, "$XDP_RATELIMIT_STATE_DIR"), "%s", out);

	daemon_start(&env, NULL);
	status = request_ok(&env, "{\"cmd\":\"status\"}");
	snprintf(expect, sizeof(expect), "%s/policy.applied.yaml", env.dir);
	cr_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(status, "daemon"),
				 "state_file")),
			 expect);
	json_decref(status);
}

/*
 * Unset, the state directory is /var/lib/xdp-ratelimit, made 0700 when
 * missing: seen from a daemon in a mount namespace of its own with a
 * tmpfs on /var/lib, so the real /var/lib is never written.
 */
Test(state_files_daemon, unset_the_state_directory_is_var_lib_made_0700)
{
	char mnt[64], cmd[256];
	json_t *status;
	struct stat st;
	bool host_had_one;
	pid_t pid;
	int i;

	host_had_one = !stat("/var/lib/xdp-ratelimit/policy.applied.yaml", &st);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (pid == 0) {
		int fd = open(env.log, O_WRONLY | O_CREAT | O_APPEND, 0600);

		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		unsetenv("XDP_RATELIMIT_STATE_DIR");
		execl("/usr/bin/unshare", "unshare", "-m", "--propagation",
		      "private", "sh", "-c", "mount -t tmpfs -o mode=0755 "
		      "xrl-test /var/lib && exec \"$0\" \"$@\"", DAEMON_BIN,
		      "--config", env.config, "--socket", env.socket,
		      "--pin-dir", env.pin_dir, (char *)NULL);
		_exit(127);
	}
	env.pid = pid;
	/* unshare and sh exec, so @pid becomes the daemon; it answers once
	 * its socket is there and the policy applied. */
	for (i = 0; i < 200 && access(env.socket, F_OK); i++)
		usleep(50000);
	status = request_ok(&env, "{\"cmd\":\"status\"}");
	cr_assert_str_eq(json_string_value(json_object_get(
				 json_object_get(status, "daemon"),
				 "state_file")),
			 "/var/lib/xdp-ratelimit/policy.applied.yaml");
	json_decref(status);
	snprintf(mnt, sizeof(mnt), "/proc/%d/root/var/lib/xdp-ratelimit",
		 (int)pid);
	cr_assert_eq(stat(mnt, &st), 0, "%s: %m", mnt);
	cr_assert_eq(st.st_mode & 07777, 0700, "mode %o", st.st_mode & 07777);
	snprintf(cmd, sizeof(cmd), "test -f %s/policy.applied.yaml", mnt);
	cr_assert_eq(system(cmd), 0, "no state file in %s", mnt);
	/* Not on the host's own /var/lib. */
	cr_assert(host_had_one ||
		  stat("/var/lib/xdp-ratelimit/policy.applied.yaml", &st),
		  "the test wrote the real /var/lib");
}
