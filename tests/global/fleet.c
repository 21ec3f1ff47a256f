// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <criterion/criterion.h>
#include "cidr.h"
#include "fixture.h"
#include "fleet.h"
#include "loader.h"
#include "packet.h"
#include "policy.h"
#include "rulemaps.h"
#include "topo.h"

#define FLEET_START_TIMEOUT_S	20.0

double fleet_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

void fleet_sleep(double seconds)
{
	struct timespec ts = {
		.tv_sec = (time_t)seconds,
		.tv_nsec = (long)((seconds - (time_t)seconds) * 1e9),
	};

	while (nanosleep(&ts, &ts) && errno == EINTR)
		;
}

static void sh_or_fail(struct fleet *f, const char *cmd)
{
	if (topo_sh("%s", cmd)) {
		fleet_destroy(f);
		cr_assert_fail("fleet: '%s' failed", cmd);
	}
}

static void make_node(struct fleet *f, int k)
{
	struct fleet_node *n = &f->node[k];
	char cmd[512];

	snprintf(n->name, sizeof(n->name), "node-%c", 'a' + k);
	snprintf(n->ns_tx, sizeof(n->ns_tx), TOPO_PREFIX "%d-tx%d", f->pid, k);
	snprintf(n->if_tx, sizeof(n->if_tx), TOPO_PREFIX "%dt%d", f->pid, k);
	snprintf(n->if_rx, sizeof(n->if_rx), TOPO_PREFIX "%dr%d", f->pid, k);
	snprintf(n->pin_dir, sizeof(n->pin_dir), "/sys/fs/bpf/" TOPO_PREFIX
		 "%d-n%d", f->pid, k);
	snprintf(n->files, sizeof(n->files), "/tmp/" TOPO_PREFIX "%d-n%d",
		 f->pid, k);
	n->sent_fd = -1;
	snprintf(cmd, sizeof(cmd), "ip netns add %s", n->ns_tx);
	sh_or_fail(f, cmd);
	snprintf(cmd, sizeof(cmd), "ip link add %s type veth peer name %s",
		 n->if_tx, n->if_rx);
	sh_or_fail(f, cmd);
	snprintf(cmd, sizeof(cmd), "ip link set %s netns %s && ip link set %s "
		 "netns %s", n->if_tx, n->ns_tx, n->if_rx, f->ns);
	sh_or_fail(f, cmd);
	snprintf(cmd, sizeof(cmd), "ip -n %s link set %s up && ip -n %s link "
		 "set %s up", n->ns_tx, n->if_tx, f->ns, n->if_rx);
	sh_or_fail(f, cmd);
	n->tx_ifindex = topo_ifindex_in(n->ns_tx, n->if_tx);
	cr_assert_gt(n->tx_ifindex, 0);
	topo_read_mac(n->ns_tx, n->if_tx, n->tx_mac);
	topo_read_mac(f->ns, n->if_rx, n->rx_mac);
}

void fleet_create(struct fleet *f, int n, bool with_redis)
{
	char cmd[256];
	int k;

	cr_assert(n > 0 && n <= FLEET_MAX_NODES);
	memset(f, 0, sizeof(*f));
	topo_cleanup_leftovers();
	f->pid = getpid();
	snprintf(f->ns, sizeof(f->ns), TOPO_PREFIX "%d-fleet", f->pid);
	snprintf(cmd, sizeof(cmd), "ip netns add %s && ip -n %s link set lo up",
		 f->ns, f->ns);
	sh_or_fail(f, cmd);
	for (k = 0; k < n; k++) {
		f->n = k + 1;
		make_node(f, k);
	}
	if (with_redis) {
		f->redis.netns = f->ns;
		cr_assert_eq(redis_start(&f->redis, 0), 0,
			     "redis-server did not start");
	}
}

void fleet_enter(struct fleet *f)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "/run/netns/%s", f->ns);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	cr_assert_geq(fd, 0, "%s: %s", path, strerror(errno));
	cr_assert_eq(setns(fd, CLONE_NEWNET), 0, "setns: %s", strerror(errno));
	close(fd);
}

static void stop_pid(pid_t *pid, int sig)
{
	int i;

	if (*pid <= 0)
		return;
	kill(*pid, sig);
	/* Bounded: 5 s, then SIGKILL. */
	for (i = 0; i < 500; i++) {
		if (waitpid(*pid, NULL, WNOHANG) == *pid) {
			*pid = 0;
			return;
		}
		usleep(10000);
	}
	kill(*pid, SIGKILL);
	waitpid(*pid, NULL, 0);
	*pid = 0;
}

void fleet_destroy(struct fleet *f)
{
	int k;

	if (!f->pid)
		return;
	for (k = 0; k < f->n; k++) {
		struct fleet_node *n = &f->node[k];

		stop_pid(&n->sender, SIGKILL);
		if (n->sent_fd >= 0)
			close(n->sent_fd);
		if (n->open)
			xrl_datapath_close(&n->dp);
		n->open = false;
		stop_pid(&n->daemon, SIGTERM);
		topo_sh("ip netns del %s 2>/dev/null", n->ns_tx);
		topo_sh("rm -rf %s %s.*", n->pin_dir, n->files);
	}
	redis_stop(&f->redis);
	topo_sh("ip netns del %s 2>/dev/null", f->ns);
	f->pid = 0;
}

static void write_file(const char *path, const char *text)
{
	FILE *out = fopen(path, "w");

	cr_assert_not_null(out, "%s: %s", path, strerror(errno));
	fputs(text, out);
	fclose(out);
}

const char *fleet_log(struct fleet *f, int k)
{
	static char text[1 << 16];
	char path[96];
	size_t len = 0;
	FILE *in;

	snprintf(path, sizeof(path), "%s.log", f->node[k].files);
	text[0] = '\0';
	in = fopen(path, "r");
	if (!in)
		return text;
	len = fread(text, 1, sizeof(text) - 1, in);
	text[len] = '\0';
	fclose(in);
	return text;
}

static void exec_daemon(struct fleet *f, int k)
{
	struct fleet_node *n = &f->node[k];
	char bin[PATH_MAX + 2], config[96], sock[96], state[128], log[96];
	char ns[PATH_MAX];
	int fd;

	topo_cli_path(bin, sizeof(bin) - 1);
	strcat(bin, "d");	/* build/xdp-ratelimitd beside the CLI */
	snprintf(config, sizeof(config), "%s.yaml", n->files);
	snprintf(sock, sizeof(sock), "%s.sock", n->files);
	/* A state directory of its own (the daemon refuses /tmp, which
	 * others may write), removed with the node's other files. */
	snprintf(state, sizeof(state), "%s.state", n->files);
	if (mkdir(state, 0700) && errno != EEXIST)
		_exit(126);
	strcat(state, "/policy.applied.yaml");
	snprintf(log, sizeof(log), "%s.log", n->files);
	snprintf(ns, sizeof(ns), "/run/netns/%s", f->ns);
	fd = open(ns, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || setns(fd, CLONE_NEWNET))
		_exit(126);
	fd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	execl(bin, bin, "-c", config, "-S", sock, "--state", state, "-P",
	      n->pin_dir, "-i", n->if_rx, "--node", n->name, (char *)NULL);
	_exit(127);
}

void fleet_start_daemon(struct fleet *f, int k, const char *yaml)
{
	struct fleet_node *n = &f->node[k];
	char config[96], text[4096];
	double deadline;
	int status, ret;

	snprintf(config, sizeof(config), "%s.yaml", n->files);
	if (f->redis_address)
		snprintf(text, sizeof(text), "redis: %s\n%s", f->redis_address,
			 yaml);
	else if (f->redis.pid)
		snprintf(text, sizeof(text), "redis: 127.0.0.1:%u\n%s",
			 f->redis.port, yaml);
	else
		snprintf(text, sizeof(text), "%s", yaml);
	write_file(config, text);
	n->daemon = fork();
	cr_assert_geq(n->daemon, 0);
	if (n->daemon == 0)
		exec_daemon(f, k);
	deadline = fleet_now() + FLEET_START_TIMEOUT_S;
	while (!strstr(fleet_log(f, k), "listening on")) {
		if (waitpid(n->daemon, &status, WNOHANG) == n->daemon) {
			n->daemon = 0;
			cr_assert_fail("daemon %s exited: %s", n->name,
				       fleet_log(f, k));
		}
		cr_assert_lt(fleet_now(), deadline, "daemon %s never listened: "
			     "%s", n->name, fleet_log(f, k));
		usleep(20000);
	}
	ret = xrl_datapath_open_pinned(&n->dp, n->pin_dir);
	cr_assert_eq(ret, 0, "pins of %s: %s", n->name, strerror(-ret));
	n->open = true;
}

/* The id of the rule that judges @src on node @k, or -1. */
static int64_t rule_of(struct fleet *f, int k, const char *src)
{
	struct xrl_lpm_key key, prefix;
	struct xrl_classified how;
	struct xrl_rule rule;

	cr_assert_eq(xrl_cidr_parse(src, &key), 0, "%s", src);
	if (xrl_rules_classify(&f->node[k].dp, key.addr, 0, NULL, &rule,
			       &prefix, &how))
		return -1;
	return rule.id;
}

static struct xrl_rule_counters counters_of(struct fleet *f, int k,
					    const char *src)
{
	struct xrl_rule_counters none = {};
	int64_t id = rule_of(f, k, src);

	if (id < 0)
		return none;
	return fixture_rule_counters(&f->node[k].dp, (uint32_t)id);
}

unsigned fleet_cpu_arrivals(struct fleet *f, int k, const char *src,
			    uint64_t *per_cpu, unsigned max)
{
	unsigned i, n = xrl_datapath_cpus();
	struct xrl_agg_state state[n];
	int64_t id = rule_of(f, k, src);

	cr_assert_geq(id, 0, "no rule for %s", src);
	cr_assert_eq(bpf_map_lookup_elem(f->node[k].dp.agg_state_fd, &id,
					 state), 0);
	for (i = 0; i < n && i < max; i++)
		per_cpu[i] = state[i].arrived;
	return i;
}

uint64_t fleet_admitted(struct fleet *f, int k, const char *src)
{
	return counters_of(f, k, src).outcome[XRL_RULE_PASSED].packets;
}

uint64_t fleet_refused(struct fleet *f, int k, const char *src)
{
	return counters_of(f, k, src).outcome[XRL_RULE_DROPPED].packets;
}

static void every_cpu(pid_t pid)
{
	cpu_set_t cpus;
	long i, n = sysconf(_SC_NPROCESSORS_ONLN);

	CPU_ZERO(&cpus);
	for (i = 0; i < n && i < CPU_SETSIZE; i++)
		CPU_SET(i, &cpus);
	sched_setaffinity(pid, sizeof(cpus), &cpus);
}

/* The sender, in the child: paced by the clock, bounded by @count and by
 * @seconds + 2 s. Returns the frames sent. */
static uint64_t send_paced(int fd, const struct packet *pkt,
			   const struct sockaddr_ll *to, unsigned pps,
			   uint64_t count, double seconds)
{
	double start = fleet_now(), elapsed;
	uint64_t sent = 0, due;

	while (sent < count) {
		elapsed = fleet_now() - start;
		if (elapsed > seconds + 2)
			break;
		due = (uint64_t)(elapsed * pps) + 1;
		if (due > count)
			due = count;
		while (sent < due) {
			if (sendto(fd, pkt->data, pkt->len, 0,
				   (const struct sockaddr *)to,
				   sizeof(*to)) != (ssize_t)pkt->len)
				break;	/* queue full: the next tick */
			sent++;
		}
		fleet_sleep(sent < due ? 0.0002 :
			    (double)(sent + 1) / pps - elapsed);
	}
	return sent;
}

void fleet_send(struct fleet *f, int k, const char *src, unsigned pps,
		double seconds)
{
	struct fleet_node *n = &f->node[k];
	struct sockaddr_ll to = {
		.sll_family = AF_PACKET,
		.sll_ifindex = n->tx_ifindex,
		.sll_halen = ETH_ALEN,
	};
	uint64_t count = (uint64_t)(pps * seconds), sent;
	struct packet pkt;
	int pipe_fd[2], fd;

	cr_assert_eq(packet_from(&pkt, src), 0);
	memcpy(pkt.data, n->rx_mac, ETH_ALEN);
	memcpy(pkt.data + ETH_ALEN, n->tx_mac, ETH_ALEN);
	memcpy(to.sll_addr, n->rx_mac, ETH_ALEN);
	fd = topo_socket_in(n->ns_tx, AF_PACKET, SOCK_RAW, 0);
	cr_assert_geq(fd, 0, "AF_PACKET in %s: %s", n->ns_tx, strerror(-fd));
	cr_assert_eq(pipe(pipe_fd), 0);
	n->sender = fork();
	cr_assert_geq(n->sender, 0);
	if (n->sender == 0) {
		struct sched_param rt = { .sched_priority = 1 };

		close(pipe_fd[0]);
		every_cpu(0);
		/* Still on whichever CPU the scheduler picks, but ahead of
		 * the other work of a shared test machine, which would
		 * otherwise turn the paced traffic into bursts. */
		sched_setscheduler(0, SCHED_RR, &rt);
		sent = send_paced(fd, &pkt, &to, pps, count, seconds);
		_exit(write(pipe_fd[1], &sent, sizeof(sent)) == sizeof(sent) ?
		      0 : 1);
	}
	close(fd);
	close(pipe_fd[1]);
	n->sent_fd = pipe_fd[0];
}

void fleet_move_sender(struct fleet *f, int k, int cpu)
{
	cpu_set_t cpus;

	if (cpu < 0) {
		every_cpu(f->node[k].sender);
		return;
	}
	CPU_ZERO(&cpus);
	CPU_SET(cpu, &cpus);
	sched_setaffinity(f->node[k].sender, sizeof(cpus), &cpus);
}

uint64_t fleet_send_wait(struct fleet *f, int k)
{
	struct fleet_node *n = &f->node[k];
	uint64_t sent = 0;
	int status;

	cr_assert_gt(n->sender, 0);
	cr_assert_eq(read(n->sent_fd, &sent, sizeof(sent)), sizeof(sent),
		     "sender of %s reported nothing", n->name);
	waitpid(n->sender, &status, 0);
	n->sender = 0;
	close(n->sent_fd);
	n->sent_fd = -1;
	return sent;
}
