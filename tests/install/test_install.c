// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * `make install` as an operator runs it: into a DESTDIR, then the files
 * it put there checked one by one: the list, the unit through
 * systemd-analyze verify, every man page through man -l, the bash
 * completion through bash itself, an operator's policy kept across
 * install and uninstall, and the unit's capabilities, with which the
 * installed daemon must load and attach.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "topo.h"

static char root[256];		/* /tmp/xrl-install-<pid> */
static char out[65536];	/* a rendered man page fits */

static void setup(void)
{
	snprintf(root, sizeof(root), "/tmp/xrl-install-%d", getpid());
	topo_sh("rm -rf %s", root);
	cr_assert_eq(mkdir(root, 0755), 0);
}

static struct topo topo;	/* for the tests that attach */
static bool have_topo;

static void teardown(void)
{
	topo_sh("rm -rf %s", root);
	if (have_topo)
		topo_destroy(&topo);
}

TestSuite(install, .init = setup, .fini = teardown, .timeout = 120);

/* Runs a shell command (formatted), stdout and stderr into `out`;
 * returns its exit status, or -1. */
static int run(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	size_t n;
	FILE *p;
	int status;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	p = popen(cmd, "r");
	cr_assert_not_null(p, "popen %s", cmd);
	n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = '\0';
	status = pclose(p);
	if (status == -1 || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* make in the source tree, without the outer make's jobserver. */
#define MAKE "env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory "

static void make_install(const char *vars)
{
	cr_assert_eq(run(MAKE "install %s 2>&1", vars), 0,
		     "make install %s:\n%s", vars, out);
}

static const char *const installed[] = {
	"etc/xdp-ratelimit/policy.yaml",
	"usr/lib/systemd/system/xdp-ratelimitd.service",
	"usr/sbin/xdp-ratelimit",
	"usr/sbin/xdp-ratelimitd",
	"usr/share/bash-completion/completions/xdp-ratelimit",
	"usr/share/man/man5/xdp-ratelimit.yaml.5",
	"usr/share/man/man8/xdp-ratelimit.8",
	"usr/share/man/man8/xdp-ratelimitd.8",
};

#define N_INSTALLED (sizeof(installed) / sizeof(installed[0]))

/* The files under @dir, relative and sorted, one a line, into `out`. */
static void list_files(const char *dir)
{
	cr_assert_eq(run("cd %s && find . ! -type d | sed 's|^\\./||' | "
			 "LC_ALL=C sort", dir), 0);
}

static void expected_list(char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < N_INSTALLED; i++)
		n += snprintf(buf + n, len - n, "%s\n", installed[i]);
}

static void destdir(char *dir, size_t len, const char *name)
{
	snprintf(dir, len, "%s/%s", root, name);
}

Test(install, puts_every_file_in_place_and_uninstall_removes_them)
{
	char dir[512], vars[600], want[2048], path[1024];
	struct stat st;

	destdir(dir, sizeof(dir), "dest");
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr", dir);
	make_install(vars);
	list_files(dir);
	expected_list(want, sizeof(want));
	cr_assert_str_eq(out, want, "installed:\n%s\nexpected:\n%s", out, want);

	snprintf(path, sizeof(path), "%s/usr/sbin/xdp-ratelimitd", dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0755);
	snprintf(path, sizeof(path), "%s/etc/xdp-ratelimit/policy.yaml", dir);
	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(st.st_mode & 07777, 0644);
	cr_assert_eq(run("cmp %s examples/policy.yaml", path), 0);

	/* The unit names the installed binary and configuration. */
	cr_assert_eq(run("grep -x 'ExecStart=/usr/sbin/xdp-ratelimitd "
			 "--config /etc/xdp-ratelimit/policy.yaml' "
			 "%s/usr/lib/systemd/system/xdp-ratelimitd.service",
			 dir), 0);
	/* The state files' directory, kept across reboots, the daemon's
	 * alone (it refuses one others can write). */
	cr_assert_eq(run("grep -x -e 'StateDirectory=xdp-ratelimit' -e "
			 "'StateDirectoryMode=0700' %s/usr/lib/systemd/system/"
			 "xdp-ratelimitd.service | wc -l | grep -x 2", dir),
		     0, "%s", out);

	cr_assert_eq(run(MAKE "uninstall %s 2>&1", vars), 0, "%s", out);
	list_files(dir);
	cr_assert_str_eq(out, "", "left after uninstall:\n%s", out);
	snprintf(path, sizeof(path), "%s/etc/xdp-ratelimit", dir);
	cr_assert_neq(stat(path, &st), 0, "%s left behind", path);
}

Test(install, uninstall_refuses_while_attached_unless_forced)
{
	char dir[512], vars[PATH_MAX + 600], want[2048];

	destdir(dir, sizeof(dir), "dest");
	topo_create(&topo);
	have_topo = true;
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr PIN_DIR=%s", dir,
		 topo.pin_dir);
	make_install(vars);
	cr_assert_eq(run("nsenter --net=/run/netns/%s build/xdp-ratelimit -P "
			 "%s attach %s 2>&1", topo.ns_rx, topo.pin_dir,
			 topo.if_rx), 0, "%s", out);

	/* The tools are what detach it: kept, saying why and how. */
	cr_assert_neq(run(MAKE "uninstall %s 2>&1", vars), 0, "%s", out);
	cr_assert(strstr(out, "uninstall: refused: xdp-ratelimit: cleanup: ") &&
		  strstr(out, "attached to ") && strstr(out, topo.if_rx) &&
		  strstr(out, "detach it first (FORCE=1 uninstalls anyway)"),
		  "%s", out);
	list_files(dir);
	expected_list(want, sizeof(want));
	cr_assert_str_eq(out, want, "uninstall refused, yet removed:\n%s", out);

	/* FORCE=1: removed, with a warning. */
	cr_assert_eq(run(MAKE "uninstall %s FORCE=1 2>&1", vars), 0, "%s", out);
	cr_assert(strstr(out, "uninstall: warning: ") &&
		  strstr(out, "uninstalling anyway (FORCE=1)"), "%s", out);
	list_files(dir);
	cr_assert_str_eq(out, "", "left after uninstall:\n%s", out);

	/* Detached and its pins gone, nothing holds an uninstall back. */
	cr_assert_eq(run("nsenter --net=/run/netns/%s build/xdp-ratelimit -P "
			 "%s detach %s 2>&1", topo.ns_rx, topo.pin_dir,
			 topo.if_rx), 0, "%s", out);
	make_install(vars);
	cr_assert_eq(run(MAKE "uninstall %s 2>&1", vars), 0, "%s", out);
	cr_assert(!strstr(out, "refused") && !strstr(out, "warning"), "%s",
		  out);
}

Test(install, never_overwrites_an_operators_policy)
{
	static const char mine[] = "default: {action: allow}\n";
	char dir[512], vars[600], conf[1024], buf[256];
	FILE *f;
	size_t n;

	destdir(dir, sizeof(dir), "dest");
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr", dir);
	snprintf(conf, sizeof(conf), "%s/etc/xdp-ratelimit/policy.yaml", dir);
	make_install(vars);
	f = fopen(conf, "w");
	cr_assert_not_null(f);
	fputs(mine, f);
	fclose(f);

	make_install(vars);
	cr_assert(strstr(out, "policy.yaml is there: kept"), "%s", out);
	f = fopen(conf, "r");
	cr_assert_not_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	cr_assert_str_eq(buf, mine);

	/* Uninstall removes everything else and keeps the edited policy. */
	cr_assert_eq(run(MAKE "uninstall %s 2>&1", vars), 0, "%s", out);
	cr_assert(strstr(out, "differs from the example: kept"), "%s", out);
	list_files(dir);
	cr_assert_str_eq(out, "etc/xdp-ratelimit/policy.yaml\n");
}

/*
 * Installed with a real PREFIX (no DESTDIR), so that the unit's paths
 * exist for systemd-analyze, and MANPATH pointing at the installed pages
 * so that its Documentation= is checked against them.
 */
Test(install, the_unit_passes_systemd_analyze_verify)
{
	char dir[512], vars[1200], unit[1024];

	destdir(dir, sizeof(dir), "prefix");
	snprintf(vars, sizeof(vars), "PREFIX=%s/usr SYSCONFDIR=%s/etc", dir,
		 dir);
	make_install(vars);
	snprintf(unit, sizeof(unit),
		 "%s/usr/lib/systemd/system/xdp-ratelimitd.service", dir);
	cr_assert_eq(run("MANPATH=%s/usr/share/man systemd-analyze verify "
			 "%s 2>&1", dir, unit), 0, "%s", out);
	cr_assert_str_eq(out, "", "systemd-analyze verify:\n%s", out);
	cr_assert_eq(run("grep -x 'Type=notify' %s && grep -x "
			 "'ExecReload=/bin/kill -HUP $MAINPID' %s", unit, unit),
		     0);
	/* Every command by absolute path: systemd looks names up in its own
	 * PATH, and a minimal system may lack the package that has one. */
	cr_assert_eq(run("grep '^Exec' %s | grep -v '^Exec[A-Za-z]*=[-@:+!]*/'",
			 unit), 1, "a command not named by its path:\n%s", out);

	/* The check can fail: a misspelt key is reported. */
	cr_assert_eq(run("sed -i 's/^Type=/Tpye=/' %s && MANPATH=%s/usr/share/man "
			 "systemd-analyze verify %s 2>&1", unit, dir, unit), 0);
	cr_assert(strstr(out, "Tpye"), "%s", out);
}

Test(install, every_man_page_renders_without_warnings)
{
	char dir[512], vars[600];
	size_t i;

	destdir(dir, sizeof(dir), "dest");
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr", dir);
	make_install(vars);
	for (i = 0; i < N_INSTALLED; i++) {
		const char *page = installed[i];
		const char *name = strrchr(page, '/') + 1;

		if (strncmp(page, "usr/share/man/", 14))
			continue;
		cr_assert_eq(run("MANWIDTH=80 man --warnings -l %s/%s 2>&1 "
				 ">/dev/null", dir, page), 0);
		cr_assert_str_eq(out, "", "%s: %s", page, out);
		cr_assert_eq(run("MANWIDTH=80 man -l %s/%s 2>/dev/null", dir,
				 page), 0);
		cr_assert(strstr(out, "NAME"), "%s has no NAME", page);
		cr_assert(strstr(out, "SEE ALSO"), "%s has no SEE ALSO", page);
		/* The page's name is the installed file's. */
		cr_assert_eq(strncmp(out, "XDP-RATELIMIT", 13), 0, "%s", name);
	}
}

/* What bash offers after @words (the last one being completed). */
static void complete(const char *dir, const char *words)
{
	cr_assert_eq(run("bash -c 'source %s/usr/share/bash-completion/"
			 "completions/xdp-ratelimit; set -- %s; "
			 "COMP_WORDS=(\"$@\"); COMP_CWORD=$(($# - 1)); "
			 "[ \"${COMP_WORDS[COMP_CWORD]}\" = _ ] && "
			 "COMP_WORDS[COMP_CWORD]=; "
			 "case $1 in *d) _xdp_ratelimitd ;; *) _xdp_ratelimit ;; "
			 "esac; echo \"${COMPREPLY[*]}\"' 2>&1", dir, words), 0,
		     "%s", out);
	out[strcspn(out, "\n")] = '\0';
}

Test(install, bash_completion_offers_what_the_tools_take)
{
	char dir[512], vars[600], words[1024];

	destdir(dir, sizeof(dir), "dest");
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr", dir);
	make_install(vars);

	/* "_" stands for the empty word being completed. */
	snprintf(words, sizeof(words), "%s/usr/sbin/xdp-ratelimit st", dir);
	complete(dir, words);
	cr_assert_str_eq(out, "status stats");
	snprintf(words, sizeof(words), "%s/usr/sbin/xdp-ratelimit attach --m",
		 dir);
	complete(dir, words);
	cr_assert_str_eq(out, "--max-rules --max-sources --memory-limit --mode");
	snprintf(words, sizeof(words),
		 "%s/usr/sbin/xdp-ratelimit attach --mode _", dir);
	complete(dir, words);
	cr_assert_str_eq(out, "native generic auto");
	snprintf(words, sizeof(words), "%s/usr/sbin/xdp-ratelimit attach l",
		 dir);
	complete(dir, words);
	cr_assert_str_eq(out, "lo");
	snprintf(words, sizeof(words), "%s/usr/sbin/xdp-ratelimit rule _", dir);
	complete(dir, words);
	cr_assert_str_eq(out, "add del list revert");
	snprintf(words, sizeof(words), "%s/usr/sbin/xdp-ratelimit re", dir);
	complete(dir, words);
	cr_assert_str_eq(out, "reload reset");
	snprintf(words, sizeof(words), "%s/usr/sbin/xdp-ratelimit check "
		 "examples/demo-pol", dir);
	complete(dir, words);
	cr_assert_str_eq(out, "examples/demo-policy.yaml");
	snprintf(words, sizeof(words), "%s/usr/sbin/xdp-ratelimitd --met", dir);
	complete(dir, words);
	cr_assert_str_eq(out, "--metrics");
}

/* The capabilities the unit grants, "cap_bpf,cap_net_admin,..." */
static void unit_caps(const char *unit, char *caps, size_t len)
{
	char *p;

	cr_assert_eq(run("sed -n 's/^CapabilityBoundingSet=//p' %s", unit), 0);
	out[strcspn(out, "\n")] = '\0';
	cr_assert_neq(out[0], '\0', "%s: no CapabilityBoundingSet", unit);
	cr_assert_eq(run("grep -qx 'AmbientCapabilities=%s' %s", out, unit), 0,
		     "AmbientCapabilities differs from the bounding set");
	cr_assert_eq(run("sed -n 's/^CapabilityBoundingSet=//p' %s", unit), 0);
	out[strcspn(out, "\n")] = '\0';
	cr_assert_lt(strlen(out), len);
	memcpy(caps, out, strlen(out) + 1);
	for (p = caps; *p; p++)
		*p = *p == ' ' ? ',' : (char)(*p >= 'A' && *p <= 'Z' ?
					      *p - 'A' + 'a' : *p);
}

/* setpriv's list: "+cap_bpf,+cap_net_admin" */
static void setpriv_caps(const char *caps, const char *without, char *buf,
			 size_t len)
{
	char copy[512], *tok, *save;
	size_t n = 0;

	snprintf(copy, sizeof(copy), "%s", caps);
	buf[0] = '\0';
	for (tok = strtok_r(copy, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save))
		if (!without || strcmp(tok, without))
			n += snprintf(buf + n, len - n, "%s+%s", n ? "," : "",
				      tok + 4);
}

/* The options of the daemon that need a capability of their own
 * (CAP_CHOWN, CAP_NET_BIND_SERVICE): the unit's set must cover them. */
static const char *const needy_options[] = {
	"--socket-group", "nogroup", "--metrics", "127.0.0.1:80", NULL,
};

static pid_t spawn_daemon(const struct topo *t, const char *bin,
			  const char *caps, const char *conf,
			  const char *sock, const char *log,
			  const char *const *extra)
{
	char inh[600], amb[600], bnd[600], netns[128];
	const char *argv[32];
	size_t argc = 0;
	FILE *emptied;
	pid_t pid;

	/* Emptied before the fork, not only by the child: else
	 * wait_daemon() may read the last daemon's "listening" in it. */
	emptied = fopen(log, "w");
	cr_assert_not_null(emptied, "%s: %s", log, strerror(errno));
	fclose(emptied);
	pid = fork();
	cr_assert_neq(pid, -1);
	if (pid)
		return pid;
	snprintf(netns, sizeof(netns), "--net=/run/netns/%s", t->ns_rx);
	snprintf(inh, sizeof(inh), "--inh-caps=-all%s%s", *caps ? "," : "",
		 caps);
	snprintf(amb, sizeof(amb), "--ambient-caps=-all%s%s", *caps ? "," : "",
		 caps);
	snprintf(bnd, sizeof(bnd), "--bounding-set=-all%s%s", *caps ? "," : "",
		 caps);
	if (!freopen(log, "w", stderr))
		_exit(127);
	/* Its state files beside the socket, never in /var/lib. */
	setenv("XDP_RATELIMIT_STATE_DIR", dirname(strdup(sock)), 1);
	argv[argc++] = "nsenter";
	argv[argc++] = netns;
	argv[argc++] = "setpriv";
	argv[argc++] = inh;
	argv[argc++] = amb;
	argv[argc++] = bnd;
	argv[argc++] = "--";
	argv[argc++] = bin;
	argv[argc++] = "--config";
	argv[argc++] = conf;
	argv[argc++] = "--socket";
	argv[argc++] = sock;
	argv[argc++] = "--pin-dir";
	argv[argc++] = t->pin_dir;
	while (extra && *extra && argc < 31)
		argv[argc++] = *extra++;
	argv[argc] = NULL;
	execvp(argv[0], (char *const *)argv);
	_exit(127);
}

/* Waits until the daemon listens (1) or exits (0, status in @status):
 * it makes its socket first, so its log says when it is ready. */
static int wait_daemon(pid_t pid, const char *log, int *status)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	int i;

	for (i = 0; i < 1000; i++) {
		if (waitpid(pid, status, WNOHANG) == pid)
			return 0;
		if (run("grep -q 'info: listening on' %s", log) == 0)
			return 1;
		nanosleep(&pause, NULL);
	}
	kill(pid, SIGKILL);
	waitpid(pid, status, 0);
	cr_assert_fail("the daemon neither listened nor exited in 20 s");
	return 0;
}

static void read_log(const char *log)
{
	cr_assert_eq(run("cat %s", log), 0);
}

/* Starts the daemon expecting it to exit 1 with one error line holding
 * @text; its log in `out`. */
static void refused_start(const struct topo *t, const char *bin,
			  const char *caps, const char *conf, const char *sock,
			  const char *log, const char *const *extra,
			  const char *text)
{
	pid_t pid;
	int status;

	pid = spawn_daemon(t, bin, caps, conf, sock, log, extra);
	if (wait_daemon(pid, log, &status)) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		status = -1;
	}
	read_log(log);
	cr_expect(status != -1 && WIFEXITED(status) &&
		  WEXITSTATUS(status) == 1,
		  "started with %s (status %#x: exit %d, signal %d):\n%s",
		  caps, status, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
		  WIFSIGNALED(status) ? WTERMSIG(status) : 0, out);
	cr_expect(strstr(out, text), "no \"%s\" in:\n%s", text, out);
	cr_expect_eq(run("grep -c 'error:' %s", log), 0, "%s", out);
	cr_expect_str_eq(out, "1\n", "one error line");
	read_log(log);
}

/*
 * On Linux 6.x CAP_SYS_ADMIN implies CAP_BPF, CAP_PERFMON and
 * CAP_NET_ADMIN (bpf_capable(), perfmon_capable(), bpf_net_capable()),
 * so only its removal can be seen failing; the other three are listed
 * as what loading and attaching need once CAP_SYS_ADMIN can go.
 */
Test(install, the_units_capabilities_are_enough_and_sys_admin_is_needed,
     .timeout = 240)
{
	char dir[512], vars[600], unit[1024], bin[1024], conf[1024];
	char sock[1024], log[1024], caps[512], list[600];
	struct topo t;
	struct stat st;
	pid_t pid;
	int status, attached, metrics;
	bool grouped;
	FILE *f;

	destdir(dir, sizeof(dir), "dest");
	snprintf(vars, sizeof(vars), "DESTDIR=%s PREFIX=/usr", dir);
	make_install(vars);
	snprintf(unit, sizeof(unit),
		 "%s/usr/lib/systemd/system/xdp-ratelimitd.service", dir);
	snprintf(bin, sizeof(bin), "%s/usr/sbin/xdp-ratelimitd", dir);
	snprintf(conf, sizeof(conf), "%s/policy.yaml", root);
	snprintf(sock, sizeof(sock), "%s/control.sock", root);
	snprintf(log, sizeof(log), "%s/daemon.log", root);
	unit_caps(unit, caps, sizeof(caps));
	cr_assert_str_eq(caps, "cap_bpf,cap_chown,cap_net_admin,"
			 "cap_net_bind_service,cap_perfmon,cap_sys_admin");

	topo_create(&t);
	f = fopen(conf, "w");
	cr_assert_not_null(f);
	fprintf(f, "interfaces: [%s]\ndefault: {action: limit, pps: 100, "
		"burst: 10}\n", t.if_rx);
	fclose(f);

	/* With exactly the unit's set: loads, attaches, listens, also
	 * with the options that need a capability of their own. */
	cr_assert_eq(topo_sh("ip -n %s link set lo up", t.ns_rx), 0);
	setpriv_caps(caps, NULL, list, sizeof(list));
	pid = spawn_daemon(&t, bin, list, conf, sock, log, needy_options);
	if (!wait_daemon(pid, log, &status)) {
		read_log(log);
		topo_destroy(&t);
		cr_assert_fail("with %s the daemon exited %d:\n%s", list,
			       WEXITSTATUS(status), out);
	}
	attached = topo_sh("nsenter --net=/run/netns/%s ip -d link show dev "
			   "%s | grep -q 'prog/xdp'", t.ns_rx, t.if_rx);
	grouped = !stat(sock, &st) && st.st_gid == 65534 &&
		  (st.st_mode & 0777) == 0660;
	metrics = topo_sh("nsenter --net=/run/netns/%s curl -sS --max-time 5 "
			  "http://127.0.0.1:80/metrics | grep "
			  "'^xdp_ratelimit_' >/dev/null", t.ns_rx);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	read_log(log);
	cr_expect_eq(attached, 0, "not attached with %s:\n%s", list, out);
	cr_expect(strstr(out, "attached (native mode)"), "%s", out);
	cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s", out);
	cr_expect(grouped, "the socket is not nogroup's, 0660");
	cr_expect_eq(metrics, 0, "no metrics on 127.0.0.1:80");
	topo_sh("rm -rf %s %s", t.pin_dir, sock);

	/* Without either, each option says what it needs, in one line. */
	setpriv_caps(caps, "cap_chown", list, sizeof(list));
	refused_start(&t, bin, list, conf, sock, log, needy_options,
		      "error: --socket-group nogroup: giving ");
	cr_expect(strstr(out, "Operation not permitted (needs CAP_CHOWN)\n"),
		  "%s", out);
	setpriv_caps(caps, "cap_net_bind_service", list, sizeof(list));
	refused_start(&t, bin, list, conf, sock, log, needy_options + 2,
		      "error: --metrics 127.0.0.1:80: cannot listen");
	cr_expect(strstr(out, "(a port below 1024 needs "
			 "CAP_NET_BIND_SERVICE)\n"), "%s", out);
	topo_sh("rm -rf %s %s", t.pin_dir, sock);

	/* Without CAP_SYS_ADMIN: refuses to start, saying what failed. */
	setpriv_caps(caps, "cap_sys_admin", list, sizeof(list));
	pid = spawn_daemon(&t, bin, list, conf, sock, log, NULL);
	if (wait_daemon(pid, log, &status)) {
		kill(pid, SIGTERM);
		waitpid(pid, NULL, 0);
		status = -1;
	}
	read_log(log);
	topo_destroy(&t);
	cr_assert(status != -1 && WIFEXITED(status) && WEXITSTATUS(status),
		  "started without cap_sys_admin:\n%s", out);
	cr_assert(strstr(out, "error: permission denied: run as root "
			 "(missing CAP_SYS_ADMIN)"), "%s", out);
}
