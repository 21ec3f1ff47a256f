// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * capture on the veth pair, as an operator runs it: the limited frames
 * of a source written to a pcapng file that tcpdump reads back, the rule
 * and verdict of each recovered from the file's comments, and the counts
 * the capture prints matching what stats counted. And what a careless
 * or hostile command line gets: an existing file, a snaplen of 0 or
 * beyond what a record holds, a verdict or rule that does not exist, a
 * second capture beside a running one.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <bpf/bpf.h>
#include <jansson.h>
#include "xrl.h"
#include "topo.h"
#include "wire.h"

#define QUIET_MS	150
#define WAIT_MS		10000	/* for a capture to arm or to end */

static struct topo topo;
static struct wire_rx rx;
static char out[65536], err[4096];
static char pcap_path[96], err_path[96];

static const char policy[] =
	"default:\n  action: allow\n"
	"rules:\n"
	"  - name: limited\n    cidr: 198.18.1.0/24\n    pps: 1\n"
	"    burst: 10\n"
	"  - name: denied\n    cidr: 198.18.3.0/24\n    action: deny\n";

static void setup(void)
{
	topo_create(&topo);
	rx.fd = -1;
	topo_attach_policy(&topo, policy);
	snprintf(pcap_path, sizeof(pcap_path),
		 "/tmp/" TOPO_PREFIX "%d-f.pcap", topo.pid);
	snprintf(err_path, sizeof(err_path),
		 "/tmp/" TOPO_PREFIX "%d-capture.err", topo.pid);
	wire_rx_open(&rx, &topo);
}

static void teardown(void)
{
	wire_rx_close(&rx);
	topo_destroy(&topo);	/* the /tmp/xrlt<pid>-* files too */
}

TestSuite(capture, .init = setup, .fini = teardown, .timeout = 120);

static void read_text(const char *path, char *buf, size_t len)
{
	ssize_t n = -1;
	int fd = open(path, O_RDONLY);

	if (fd >= 0) {
		n = read(fd, buf, len - 1);
		close(fd);
	}
	buf[n > 0 ? n : 0] = '\0';
}

/* The capture in the background, its stderr into err_path; returns once
 * it says it is capturing. */
static pid_t capture_start(const char *args)
{
	char cli[PATH_MAX], cmd[PATH_MAX * 2 + 1024], text[4096];
	pid_t pid;
	int waited;

	unlink(err_path);	/* a capture before this one said it too */
	topo_cli_path(cli, sizeof(cli));
	snprintf(cmd, sizeof(cmd), "exec nsenter --net=/run/netns/%s %s "
		 "--pin-dir %s capture %s 2>%s", topo.ns_rx, cli,
		 topo.pin_dir, args, err_path);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	for (waited = 0; waited < WAIT_MS; waited += 10) {
		read_text(err_path, text, sizeof(text));
		if (strstr(text, "capturing from "))
			return pid;
		if (waitpid(pid, NULL, WNOHANG) == pid)
			cr_assert_fail("capture %s ended: %s", args, text);
		poll(NULL, 0, 10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	cr_assert_fail("capture %s never armed: %s", args, text);
	return -1;
}

/* Its exit status once it ended (killed after WAIT_MS); its stderr in
 * err. */
static int capture_wait(pid_t pid)
{
	int status, waited;

	for (waited = 0; waited < WAIT_MS; waited += 10) {
		if (waitpid(pid, &status, WNOHANG) == pid) {
			read_text(err_path, err, sizeof(err));
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		poll(NULL, 0, 10);
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	read_text(err_path, err, sizeof(err));
	cr_assert_fail("capture did not end: %s", err);
	return -1;
}

/* ---- the pcapng file, read as the test's own (independent) reader ---- */

struct frame {
	uint32_t cap_len, frame_len;
	uint8_t data[256];
	char comment[160];
};

#define MAX_FRAMES	64

struct pcapng {
	uint32_t snaplen;
	size_t n;
	struct frame frames[MAX_FRAMES];
};

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The comment option of an EPB's options at @opt, @len bytes. */
static void read_comment(const uint8_t *opt, size_t len, struct frame *f)
{
	uint16_t code, olen;

	while (len >= 4) {
		code = opt[0] | opt[1] << 8;
		olen = opt[2] | opt[3] << 8;
		if (!code || 4 + (size_t)olen > len)
			return;
		if (code == 1)
			snprintf(f->comment, sizeof(f->comment), "%.*s",
				 (int)olen, (const char *)opt + 4);
		olen = (olen + 3) & ~3;
		opt += 4 + olen;
		len -= 4 + olen;
	}
}

static void read_pcapng(const char *path, struct pcapng *p)
{
	static uint8_t buf[1 << 20];
	size_t n = 0, at = 0;
	uint32_t type, len;
	struct frame *f;
	FILE *file = fopen(path, "rb");

	memset(p, 0, sizeof(*p));
	cr_assert_not_null(file, "%s", path);
	n = fread(buf, 1, sizeof(buf), file);
	fclose(file);
	cr_assert_geq(n, 28);
	cr_assert_eq(le32(buf), 0x0a0d0d0a, "a section header first");
	cr_assert_eq(le32(buf + 8), 0x1a2b3c4d);
	while (at + 12 <= n) {
		type = le32(buf + at);
		len = le32(buf + at + 4);
		cr_assert(len >= 12 && len % 4 == 0 && at + len <= n,
			  "block at %zu of %u bytes", at, len);
		cr_assert_eq(le32(buf + at + len - 4), len, "trailing length");
		if (type == 1)
			p->snaplen = le32(buf + at + 12);
		if (type == 6) {
			cr_assert_lt(p->n, MAX_FRAMES);
			f = &p->frames[p->n++];
			f->cap_len = le32(buf + at + 20);
			f->frame_len = le32(buf + at + 24);
			cr_assert_leq(f->cap_len, sizeof(f->data));
			memcpy(f->data, buf + at + 28, f->cap_len);
			read_comment(buf + at + 28 + ((f->cap_len + 3) & ~3U),
				     len - 32 - ((f->cap_len + 3) & ~3U), f);
		}
		at += len;
	}
	cr_assert_eq(at, n, "whole blocks only");
}

/* Lines of `tcpdump -r FILE -nn` that name @needle; all its lines in out. */
static int tcpdump_lines(const char *path, const char *needle, int *all)
{
	char cmd[256], *line, *save;
	int status, n = 0;
	FILE *p;
	size_t len;

	snprintf(cmd, sizeof(cmd), "tcpdump -r %s -nn 2>/dev/null", path);
	p = popen(cmd, "r");
	cr_assert_not_null(p);
	len = fread(out, 1, sizeof(out) - 1, p);
	out[len] = '\0';
	status = pclose(p);
	cr_assert_eq(status, 0, "tcpdump -r %s: %d", path, status);
	*all = 0;
	for (line = strtok_r(out, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		(*all)++;
		n += strstr(line, needle) != NULL;
	}
	return n;
}

/* The packets stats counts rule @name dropped. */
static long long stats_dropped(const char *name)
{
	json_t *root, *rule;
	long long dropped = -1;
	size_t i;

	(void)name;
	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "stats --json"), 0, "%s", err);
	root = json_loads(out, 0, NULL);
	cr_assert_not_null(root, "%s", out);
	json_array_foreach(json_object_get(root, "rules"), i, rule) {
		if (!strcmp(json_string_value(json_object_get(rule, "prefix")),
			    "198.18.1.0/24"))
			dropped = json_integer_value(json_object_get(
				json_object_get(rule, "dropped"), "packets"));
	}
	json_decref(root);
	return dropped;
}

static long counted(const char *what)
{
	const char *at = strstr(err, what);

	cr_assert_not_null(at, "no \"%s\" in: %s", what, err);
	while (at > err && at[-1] != '\n')
		at--;
	return strtol(at, NULL, 10);
}

static pid_t capture_to_file(const char *opts)
{
	char args[512];

	snprintf(args, sizeof(args), "%s -w %s", opts, pcap_path);
	return capture_start(args);
}

Test(capture, limited_frames_read_back_by_tcpdump_with_rule_and_verdict)
{
	struct stat st;
	struct pcapng p;
	pid_t pid;
	int all;
	size_t i;

	pid = capture_to_file("--verdict limited -c 30");
	/* Passed and denied frames, not asked for; then 10 of the burst
	 * and 30 limited ones (1 pps: no refill worth a frame meanwhile). */
	wire_send(&topo, "198.18.9.1", 5);
	wire_send(&topo, "198.18.3.3", 5);
	wire_send(&topo, "198.18.1.7", 40);
	cr_assert_eq(capture_wait(pid), 0, "%s", err);
	wire_rx_drain(&rx, QUIET_MS);
	cr_assert_eq(wire_rx_count(&rx, "198.18.1.7"), 10);

	cr_assert_eq(counted(" frames captured"), 30, "%s", err);
	cr_assert_eq(counted(" sampled out"), 0, "%s", err);
	cr_assert_eq(counted(" lost"), 0, "%s", err);
	cr_assert_eq(stats_dropped("limited"), 30);

	cr_assert_eq(stat(pcap_path, &st), 0);
	cr_assert_eq(st.st_mode & 0777, 0600, "readable by its owner only");
	cr_assert_eq(tcpdump_lines(pcap_path, "198.18.1.7.", &all), 30,
		     "tcpdump:\n%s", out);
	cr_assert_eq(all, 30);
	read_pcapng(pcap_path, &p);
	cr_assert_eq(p.n, 30);
	cr_assert_eq(p.snaplen, 256);
	for (i = 0; i < p.n; i++) {
		/* No daemon runs to name it: its CIDR, its default name. */
		cr_assert_str_eq(p.frames[i].comment, "rule=198.18.1.0/24 "
				 "id=1 verdict=limited counter=drop xdp=drop");
		/* Shorter than the snaplen: whole. */
		cr_assert_eq(p.frames[i].cap_len, p.frames[i].frame_len);
		cr_assert_eq(p.frames[i].cap_len, 64);
		/* 198.18.1.7 as the IPv4 header's source. */
		cr_assert_eq(memcmp(p.frames[i].data + 26,
				    "\xc6\x12\x01\x07", 4), 0);
	}
}

Test(capture, by_rule_and_snaplen_cuts_frames_keeping_their_length)
{
	struct pcapng p;
	size_t i;
	int all;
	pid_t pid;

	pid = capture_to_file("--rule 198.18.3.0/24 --snaplen 34 -c 5");
	wire_send(&topo, "198.18.1.8", 5);
	wire_send(&topo, "198.18.3.3", 5);
	cr_assert_eq(capture_wait(pid), 0, "%s", err);
	cr_assert_eq(counted(" frames captured"), 5, "%s", err);
	cr_assert_eq(tcpdump_lines(pcap_path, "198.18.3.3", &all), 5,
		     "tcpdump:\n%s", out);
	read_pcapng(pcap_path, &p);
	cr_assert_eq(p.n, 5);
	for (i = 0; i < p.n; i++) {
		cr_assert_str_eq(p.frames[i].comment, "rule=198.18.3.0/24 "
				 "id=2 verdict=denied counter=deny xdp=drop");
		cr_assert_eq(p.frames[i].cap_len, 34);
		cr_assert_eq(p.frames[i].frame_len, 64);
	}

	/* By id too: 2 is the deny rule's (the limited one is 1). */
	pid = capture_to_file("--force --rule 2 -c 1");
	wire_send(&topo, "198.18.1.9", 1);
	wire_send(&topo, "198.18.3.4", 1);
	cr_assert_eq(capture_wait(pid), 0, "%s", err);
	read_pcapng(pcap_path, &p);
	cr_assert_eq(p.n, 1);
	cr_assert_eq(memcmp(p.frames[0].data + 26, "\xc6\x12\x03\x04", 4), 0);
}

/* The config as the program reads it, from the pin. */
static struct xrl_capture_config pinned_config(void)
{
	struct xrl_capture_config cfg;
	char path[PATH_MAX + 32];
	__u32 zero = 0;
	int fd;

	snprintf(path, sizeof(path), "%s/" XRL_MAP_CAPTURE, topo.pin_dir);
	fd = bpf_obj_get(path);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(bpf_map_lookup_elem(fd, &zero, &cfg), 0);
	close(fd);
	return cfg;
}

Test(capture, sigint_ends_it_with_its_counts_and_clears_the_config)
{
	struct packet lldp;
	struct pcapng p;
	size_t i;
	pid_t pid;
	int all;

	pid = capture_to_file("--verdict passed");
	cr_assert_eq(pinned_config().armed, 1);
	wire_send(&topo, "198.18.9.1", 7);
	cr_assert_eq(packet_build(&lldp, &(struct packet_spec){
		.ethertype = 0x88cc }), 0);
	wire_send_frame(&topo, &lldp, 1);
	wire_rx_drain(&rx, QUIET_MS);
	kill(pid, SIGINT);
	cr_assert_eq(capture_wait(pid), 0, "%s", err);
	cr_assert_eq(pinned_config().armed, 0);
	/* Every frame passed: the veth's own (IPv6 neighbour discovery)
	 * too, but ours all. */
	cr_assert_eq(tcpdump_lines(pcap_path, "198.18.9.1.", &all), 7,
		     "tcpdump:\n%s", out);
	read_pcapng(pcap_path, &p);
	cr_assert_eq(counted(" frames captured"), (long)p.n, "%s", err);
	cr_assert_eq((int)p.n, all);
	for (i = 0; i < p.n; i++)
		cr_assert(strstr(p.frames[i].comment, " verdict=passed ") &&
			  strstr(p.frames[i].comment, " xdp=pass"), "%s",
			  p.frames[i].comment);
	for (i = 0; i < p.n; i++)
		if (!memcmp(p.frames[i].data + 26, "\xc6\x12\x09\x01", 4))
			break;
	cr_assert_lt(i, p.n);
	cr_assert_str_eq(p.frames[i].comment, "rule=default id=0 "
			 "verdict=passed counter=allow xdp=pass");
	/* Judged before any rule: none named. */
	for (i = 0; i < p.n; i++)
		if (!memcmp(p.frames[i].data + 12, "\x88\xcc", 2))
			break;
	cr_assert_lt(i, p.n, "the LLDP frame");
	cr_assert_str_eq(p.frames[i].comment, "rule=- verdict=passed "
			 "counter=nonip xdp=pass");
}

Test(capture, to_standard_output_piped_into_tcpdump)
{
	char cli[PATH_MAX], cmd[PATH_MAX * 2 + 512];
	int n = 0, waited;
	pid_t pid;
	FILE *p;

	topo_cli_path(cli, sizeof(cli));
	snprintf(cmd, sizeof(cmd), "exec nsenter --net=/run/netns/%s %s "
		 "--pin-dir %s capture --verdict limited -c 12 -w - 2>%s | "
		 "tcpdump -r - -nn 2>/dev/null | grep -c ' 198.18.1.6[.]' "
		 ">%s-n", topo.ns_rx, cli, topo.pin_dir, err_path, pcap_path);
	unlink(err_path);
	pid = fork();
	cr_assert_geq(pid, 0);
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	err[0] = '\0';
	for (waited = 0; !strstr(err, "capturing from "); waited += 10) {
		read_text(err_path, err, sizeof(err));
		poll(NULL, 0, 10);
		cr_assert_eq(waitpid(pid, NULL, WNOHANG), 0, "%s", err);
		cr_assert_lt(waited, WAIT_MS, "never armed: %s", err);
	}
	wire_send(&topo, "198.18.1.6", 22);	/* 10 of the burst, 12 limited */
	cr_assert_eq(capture_wait(pid), 0, "%s", err);
	snprintf(cmd, sizeof(cmd), "%s-n", pcap_path);
	p = fopen(cmd, "r");
	cr_assert_not_null(p);
	cr_assert_eq(fscanf(p, "%d", &n), 1);
	fclose(p);
	cr_assert_eq(n, 12, "tcpdump read %d frames from the pipe", n);
}

Test(capture, a_second_capture_beside_a_running_one_is_refused)
{
	char second[128];
	pid_t pid;

	pid = capture_to_file("");
	snprintf(second, sizeof(second), "capture -w %s-2", pcap_path);
	cr_assert_neq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			       "%s", second), 0);
	cr_assert(strstr(err, "xdp-ratelimit: capture: a capture (pid "),
		  "%s", err);
	cr_assert(strstr(err, ") runs already on "), "%s", err);
	cr_assert_eq(pinned_config().owner, (__u32)pid);
	kill(pid, SIGTERM);
	cr_assert_eq(capture_wait(pid), 0, "%s", err);
}

static void refused(const char *args, const char *message)
{
	char expected[512];

	cr_assert_neq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			       "capture %s", args), 0, "%s", args);
	snprintf(expected, sizeof(expected), "xdp-ratelimit: capture: %s\n",
		 message);
	cr_assert_str_eq(err, expected, "%s", args);
	cr_assert_eq(pinned_config().armed, 0, "%s", args);
}

Test(capture, hostile_command_lines_are_refused_naming_what)
{
	char args[256], message[256];
	struct stat st;
	FILE *f;

	f = fopen(pcap_path, "w");
	cr_assert_not_null(f);
	fputs("keep me\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "-w %s", pcap_path);
	snprintf(message, sizeof(message), "%s exists (--force to overwrite "
		 "it)", pcap_path);
	refused(args, message);
	cr_assert_eq(stat(pcap_path, &st), 0);
	cr_assert_eq(st.st_size, 8, "the file is untouched");

	refused("--snaplen 0 -w -", "--snaplen 0: not a number from 1 to 256");
	refused("--snaplen 99999999999999999999 -w -",
		"--snaplen 99999999999999999999: not a number from 1 to 256");
	refused("--snaplen 257 -w -", "--snaplen 257: not a number from 1 to "
		"256");
	refused("-c 0 -w -", "--count 0: not a number from 1 to "
		"9223372036854775807");
	refused("--verdict dropped -w -", "--verdict dropped: not one of drop, "
		"limited, banned, denied, blocklisted, passed");
	refused("--rule nosuch -w -", "--rule nosuch: no rule of that name, "
		"CIDR or id in force");
	refused("--verdict limited", "-w FILE is required (- for standard "
		"output)");
}

Test(capture, force_overwrites_an_existing_file)
{
	char args[256];
	struct pcapng p;
	pid_t pid;
	FILE *f;

	f = fopen(pcap_path, "w");
	cr_assert_not_null(f);
	fputs("old\n", f);
	fclose(f);
	snprintf(args, sizeof(args), "--force -c 2 -w %s", pcap_path);
	pid = capture_start(args);
	wire_send(&topo, "198.18.9.1", 2);
	cr_assert_eq(capture_wait(pid), 0, "%s", err);
	read_pcapng(pcap_path, &p);
	cr_assert_eq(p.n, 2);
}
