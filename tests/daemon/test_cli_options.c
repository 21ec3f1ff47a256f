// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The CLI's options and refusals as an operator meets them: global
 * --pin-dir/--socket (and their environment variables) before or after
 * the command, --version, help that lists only what the parser takes,
 * one error prefix naming options rather than protocol fields, rule del
 * taking what rule add takes, and the commands that would not do what
 * was asked saying so: attach with another size or mode, detach of the
 * last interface under a daemon, pins in a private mount namespace.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "daemon.h"
#include "pin.h"
#include "topo.h"
#include "xrl.h"

static struct daemon_env env;
static struct topo topo;
static bool have_topo;
static char out[1 << 16];

static void setup(void)
{
	env_setup(&env);
	env_write(&env, NULL, "default:\n  action: allow\n");
}

static void teardown(void)
{
	env_teardown(&env);
	if (have_topo)
		topo_destroy(&topo);
}

TestSuite(cli_options, .init = setup, .fini = teardown, .timeout = 120);

/* Runs a shell command line (formatted), output into @out. */
static int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int sh(const char *fmt, ...)
{
	char command[PATH_MAX * 4];
	va_list args;
	size_t got;
	FILE *pipe;

	va_start(args, fmt);
	vsnprintf(command, sizeof(command), fmt, args);
	va_end(args);
	strncat(command, " 2>&1", sizeof(command) - strlen(command) - 1);
	pipe = popen(command, "r");
	cr_assert_not_null(pipe);
	got = fread(out, 1, sizeof(out) - 1, pipe);
	out[got] = '\0';
	return WEXITSTATUS(pclose(pipe));
}

static bool one_line(void)
{
	char *nl = strchr(out, '\n');

	return nl && !nl[1];
}

Test(cli_options, global_options_environment_version_and_help)
{
	daemon_start(&env, NULL);
	cr_assert_eq(sh("build/xdp-ratelimit --version"), 0, "%s", out);
	cr_assert_str_eq(out, "xdp-ratelimit " XRL_VERSION "\n");

	/* -P and -S before the command, after it, or from the
	 * environment. */
	cr_assert_eq(sh("build/xdp-ratelimit -P %s -S %s rule list",
			env.pin_dir, env.socket),
		     0, "%s", out);
	cr_assert_eq(sh("build/xdp-ratelimit rule list -S %s -P %s", env.socket,
			env.pin_dir),
		     0, "%s", out);
	cr_assert_eq(sh("XDP_RATELIMIT_SOCKET=%s XDP_RATELIMIT_PIN_DIR=%s "
			"build/xdp-ratelimit rule list",
			env.socket, env.pin_dir),
		     0, "%s", out);
	cr_assert(strstr(out, "default"), "%s", out);
	cr_assert_eq(sh("XDP_RATELIMIT_PIN_DIR=%s build/xdp-ratelimit "
			"status --json",
			env.pin_dir),
		     0, "%s", out);
	cr_assert_eq(sh("XDP_RATELIMIT_SOCKET=/nonexistent/sock "
			"build/xdp-ratelimit -S %s rule list",
			env.socket),
		     0, "an option wins over the environment: %s", out);

	/* Help lists -P and -S for every command, and help --help works. */
	cr_assert_eq(sh("build/xdp-ratelimit help --help"), 0, "%s", out);
	cr_assert_eq(sh("build/xdp-ratelimit detach --help"), 0, "%s", out);
	cr_assert(strstr(out, "-P, --pin-dir DIR") &&
			  strstr(out, "-S, --socket PATH"),
		  "%s", out);
	cr_assert_eq(sh("build/xdp-ratelimit st"), 1, "%s", out);
	cr_assert(strstr(out, "ambiguous command 'st'") && one_line(), "%s",
		  out);
	cr_assert_eq(sh("build/xdp-ratelimit stats --bogus"), 1, "%s", out);
	cr_assert(strstr(out, "xdp-ratelimit: stats: --bogus is not an "
			      "option") &&
			  one_line(),
		  "%s", out);
}

Test(cli_options, one_error_prefix_naming_options_and_del_takes_what_add_takes)
{
	daemon_start(&env, NULL);
	cr_assert_eq(sh("build/xdp-ratelimit -S %s rule add 198.18.205.0/24 "
			"--action throttle",
			env.socket),
		     1, "%s", out);
	cr_assert(!strncmp(out,
			   "xdp-ratelimit: rule: --action: unknown "
			   "action \"throttle\"",
			   54) &&
			  one_line(),
		  "%s", out);
	cr_assert_eq(sh("build/xdp-ratelimit -S %s rule add 198.18.205.7 "
			"--action deny",
			env.socket),
		     0, "%s", out);
	cr_assert_eq(sh("build/xdp-ratelimit -S %s rule add 198.18.205.7 "
			"--action deny",
			env.socket),
		     1, "%s", out);
	cr_assert(strstr(out, "--replace") && !strstr(out, "\"replace\"") &&
			  !strstr(out, "rule.add") && one_line(),
		  "%s", out);
	cr_assert_eq(sh("build/xdp-ratelimit -S %s rule del 198.18.205.7",
			env.socket),
		     0, "%s", out);
	cr_assert(strstr(out, "deleted:") && strstr(out, "198.18.205.7/32"),
		  "%s", out);
}

static int cli_in_ns(const char *fmt, const char *arg)
{
	char args[PATH_MAX];

	snprintf(args, sizeof(args), fmt, arg);
	return sh("nsenter --net=/run/netns/%s build/xdp-ratelimit -P %s "
		  "-S %s %s",
		  topo.ns_rx, env.pin_dir, env.socket, args);
}

Test(cli_options, attach_and_detach_refuse_what_they_would_not_do)
{
	char link[PATH_MAX + 32];
	struct stat st;

	topo_create(&topo);
	have_topo = true;
	env.netns = topo.ns_rx;
	cr_assert_eq(cli_in_ns("attach %s", topo.if_rx), 0, "%s", out);
	cr_assert_eq(cli_in_ns("attach %s --max-sources 4096", topo.if_rx), 1,
		     "%s", out);
	cr_assert(strstr(out, "--max-sources 4096: the program pinned in") &&
			  one_line(),
		  "%s", out);
	cr_assert_eq(cli_in_ns("attach %s --mode generic", topo.if_rx), 1, "%s",
		     out);
	cr_assert(strstr(out, "already attached; --mode"), "%s", out);
	cr_assert_eq(cli_in_ns("attach %s --priority 20", topo.if_rx), 1, "%s",
		     out);
	cr_assert(strstr(out, "already attached; --priority applies when "
			 "attaching") && one_line(), "%s", out);
	cr_assert_eq(cli_in_ns("attach %s --priority 1001", topo.if_rx), 1,
		     "%s", out);
	cr_assert(strstr(out, "--priority 1001: not a number from 0 to 1000") &&
			  one_line(), "%s", out);

	daemon_start(&env, NULL);
	cr_assert_eq(cli_in_ns("detach %s", topo.if_rx), 1, "%s", out);
	cr_assert(strstr(out, "is the last interface") &&
			  strstr(out, "stop the daemon first") && one_line(),
		  "%s", out);
	snprintf(link, sizeof(link), "%s/link_%s", env.pin_dir, topo.if_rx);
	if (stat(link, &st))	/* through libxdp's dispatcher */
		snprintf(link, sizeof(link), "%s/chain_%s", env.pin_dir,
			 topo.if_rx);
	cr_assert_eq(stat(link, &st), 0, "the link pin stayed");
	json_decref(request_ok(&env, "{\"cmd\":\"rule.list\"}"));
	daemon_stop(&env, SIGTERM);
	cr_assert_eq(cli_in_ns("detach %s", topo.if_rx), 0, "%s", out);
}

Test(cli_options, attach_under_ip_netns_exec_is_refused)
{
	char ns[32], *rc;

	/* `ip netns exec` gives the command a mount namespace of its own
	 * with a fresh /sys: a bpffs mounted there, and pins in it, would
	 * vanish when the command exits. */
	snprintf(ns, sizeof(ns), "xrlt-exec-%d", getpid());
	cr_assert_eq(sh("ip netns add %s", ns), 0, "%s", out);
	cr_assert_eq(
		sh("ip netns exec %s build/xdp-ratelimit -P "
		   "/sys/fs/bpf/xrl-exec-%d attach lo 2>&1; echo \"rc=$?\"; "
		   "ip netns del %s",
		   ns, getpid(), ns),
		0, "%s", out);
	rc = strstr(out, "rc=");
	cr_assert(rc && !strcmp(rc, "rc=1\n"), "%s", out);
	*rc = '\0';
	cr_assert(strstr(out, "mount namespace of its own (ip netns exec?)") &&
			  strstr(out, "nsenter") && one_line(),
		  "%s", out);
}

Test(cli_options, readers_under_ip_netns_exec_say_why_the_pins_are_unseen)
{
	static const char *const readers[] = {
		"status", "stats", "explain 198.18.1.7",
	};
	char ns[32], *rc;
	size_t i;

	/* The program is loaded and pinned (env_setup): under `ip netns
	 * exec`, whose fresh /sys hides the host's bpffs, "not loaded"
	 * would be false. */
	snprintf(ns, sizeof(ns), "xrlt-read-%d", getpid());
	for (i = 0; i < sizeof(readers) / sizeof(readers[0]); i++) {
		sh("ip netns add %s && ip netns exec %s build/xdp-ratelimit "
		   "-P %s %s 2>&1; echo \"rc=$?\"; ip netns del %s", ns, ns,
		   env.pin_dir, readers[i], ns);
		rc = strstr(out, "rc=");
		cr_assert(rc && !strcmp(rc, "rc=1\n"), "%s: %s", readers[i],
			  out);
		*rc = '\0';
		cr_assert(!strstr(out, "not loaded") &&
				  strstr(out, "mount namespace of its own (ip "
					      "netns exec?)") &&
				  strstr(out, "nsenter") && one_line(),
			  "%s: %s", readers[i], out);
	}
}

Test(cli_options, attach_in_a_private_mount_namespace_without_bpffs_is_refused)
{
	char pins[PATH_MAX], *rc;
	struct stat st;

	/* Without bpffs in a mount namespace of its own, a bpffs attach
	 * mounted there would vanish with the namespace, and the program
	 * with it: attach must refuse, not report success. */
	topo_create(&topo);
	have_topo = true;
	snprintf(pins, sizeof(pins), "/sys/fs/bpf/xrl-private-%d", getpid());
	cr_assert_eq(sh("unshare --mount --propagation private sh -c '"
			"while mountpoint -q /sys/fs/bpf; do "
			"umount -l /sys/fs/bpf || exit 9; done; "
			"nsenter --net=/run/netns/%s build/xdp-ratelimit -P %s "
			"attach %s; echo \"rc=$?\"'",
			topo.ns_rx, pins, topo.if_rx),
		     0, "%s", out);
	rc = strstr(out, "rc=");
	cr_assert(rc && !strcmp(rc, "rc=1\n"), "%s", out);
	*rc = '\0';
	cr_assert(strstr(out, "xdp-ratelimit: attach: /sys/fs/bpf: no bpf "
			      "filesystem, and this is a mount namespace of its "
			      "own") && strstr(out, "nsenter") && one_line(),
		  "%s", out);
	cr_assert_neq(stat(pins, &st), 0, "nothing pinned on the host");
	cr_assert_eq(sh("nsenter --net=/run/netns/%s ip link show dev %s",
			topo.ns_rx, topo.if_rx), 0, "%s", out);
	cr_assert(!strstr(out, "xdp"), "nothing attached: %s", out);

	/* Nor with a bpffs that namespace mounted for itself. */
	cr_assert_eq(sh("unshare --mount --propagation private sh -c '"
			"while mountpoint -q /sys/fs/bpf; do "
			"umount -l /sys/fs/bpf || exit 9; done; "
			"mount -t bpf bpf /sys/fs/bpf || exit 9; "
			"nsenter --net=/run/netns/%s build/xdp-ratelimit -P %s "
			"attach %s; echo \"rc=$?\"'",
			topo.ns_rx, pins, topo.if_rx),
		     0, "%s", out);
	rc = strstr(out, "rc=");
	cr_assert(rc && !strcmp(rc, "rc=1\n"), "%s", out);
	*rc = '\0';
	cr_assert(strstr(out, "xdp-ratelimit: attach: /sys/fs/bpf: a bpf "
			      "filesystem of this mount namespace only") &&
			  one_line(), "%s", out);
	cr_assert_eq(sh("nsenter --net=/run/netns/%s ip link show dev %s",
			topo.ns_rx, topo.if_rx), 0, "%s", out);
	cr_assert(!strstr(out, "xdp"), "nothing attached: %s", out);
}

Test(cli_options, detach_finds_the_daemon_on_its_pins_whatever_its_socket)
{
	char text[PATH_MAX + 64];
	pid_t pid;

	topo_create(&topo);
	have_topo = true;
	env.netns = topo.ns_rx;
	cr_assert_eq(cli_in_ns("attach %s", topo.if_rx), 0, "%s", out);
	pid = daemon_start(&env, NULL);
	/* Not told the daemon's socket: the default one is not its. */
	cr_assert_eq(sh("nsenter --net=/run/netns/%s build/xdp-ratelimit -P %s "
			"detach %s", topo.ns_rx, env.pin_dir, topo.if_rx),
		     1, "%s", out);
	snprintf(text, sizeof(text), "xdp-ratelimitd (pid %d, socket %s) runs "
		 "on these pins", (int)pid, env.socket);
	cr_assert(strstr(out, "is the last interface") && strstr(out, text) &&
			  one_line(), "%s", out);
	cr_assert(xrl_pin_has_iface(env.pin_dir, topo.if_rx), "still attached");
	daemon_stop(&env, SIGTERM);
	cr_assert_eq(cli_in_ns("detach %s", topo.if_rx), 0, "%s", out);
}
