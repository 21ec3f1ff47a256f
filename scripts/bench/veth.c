// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * veth.c - the two halves of the veth benchmark that need libbpf
 * (scripts/bench/veth runs the rest):
 *
 *   attach: puts a program on the receiving veth (native XDP), replacing
 *           the one there so that the veth's NAPI thread lives on: one
 *           of ours, or one already loaded, by id (xdp-filter's, which
 *           its own loader put on another device);
 *   gen:    floods the receiving veth from the sending one for a fixed
 *           time with gen.bpf.c run as live frames.
 *
 * A program attached through netlink stays on the device when this
 * process exits; deleting the namespace (the veth) removes it.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_link.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "common.h"
#include "datapath.h"
#include "gen.skel.h"
#include "loader.h"
#include "packet.h"
#include "policy.h"
#include "policy_map.h"
#include "ref.skel.h"
#include "verdict.skel.h"
#include "veth.h"

#define GEN_CHUNK	65536	/* frames per test run between clock checks */
#define UDP_DISCARD	9

struct veth_opts {
	const char *netns;	/* /run/netns/NAME */
	const char *dev;
	const char *prog;	/* attach: drop, pass, ref, limiter or id */
	__u32 prog_id;		/* attach id: a loaded program */
	__u64 pps, burst;	/* attach limiter: its default rule */
	bool no_budget;		/* attach limiter: new_sources: off */
	const char *dst_mac;	/* gen: the receiving veth's address */
	__u32 sources;		/* gen: how many source addresses */
	double seconds;		/* gen: how long */
	bool ipv6;		/* gen: IPv6 frames */
};

static int enter_netns(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (setns(fd, CLONE_NEWNET))
		ret = -errno;
	close(fd);
	return ret;
}

/* The interface @dev of namespace @netns; leaves this thread there. */
static int ifindex_in(const char *netns, const char *dev)
{
	int ret = enter_netns(netns);

	if (ret) {
		bench_log("entering %s: %s", netns, strerror(-ret));
		return ret;
	}
	ret = if_nametoindex(dev);
	if (!ret) {
		bench_log("no interface %s in %s", dev, netns);
		return -ENODEV;
	}
	return ret;
}

static int attach_fd(const struct veth_opts *o, int prog_fd)
{
	int ifindex = ifindex_in(o->netns, o->dev);

	if (ifindex < 0)
		return ifindex;
	if (bpf_xdp_attach(ifindex, prog_fd, XDP_FLAGS_DRV_MODE, NULL))
		return -errno;
	return 0;
}

static int attach_verdict(const struct veth_opts *o)
{
	struct verdict_bpf *skel = verdict_bpf__open_and_load();
	int ret;

	if (!skel)
		return -errno;
	ret = attach_fd(o, bpf_program__fd(!strcmp(o->prog, "drop") ?
					   skel->progs.bench_drop :
					   skel->progs.bench_pass));
	verdict_bpf__destroy(skel);
	return ret;
}

/* The reference program (ref.bpf.c) with the same rate as the limiter. */
static int attach_ref(const struct veth_opts *o)
{
	struct ref_bpf *skel = ref_bpf__open();
	int ret;

	if (!skel)
		return -errno;
	skel->rodata->interval_ns = NS_PER_S / o->pps;
	skel->rodata->tolerance_ns = o->burst * (NS_PER_S / o->pps);
	ret = ref_bpf__load(skel);
	if (!ret)
		ret = attach_fd(o, bpf_program__fd(skel->progs.bench_ref));
	ref_bpf__destroy(skel);
	return ret;
}

/* The limiter with one default rule that every source is judged by. */
static int attach_limiter(const struct veth_opts *o)
{
	struct xrl_policy policy;
	struct xrl_datapath dp;
	char err[256] = "";
	int ret;

	ret = xrl_datapath_load(&dp, NULL);
	if (ret)
		return ret;
	ret = xrl_policy_init(&policy);
	if (ret)
		goto close_dp;
	policy.rules[0].action = XRL_ACTION_LIMIT;
	policy.rules[0].pps = o->pps;
	policy.rules[0].burst = o->burst;
	policy.new_sources_off = o->no_budget;
	ret = xrl_policy_apply(&dp, &policy, err, sizeof(err));
	if (ret)
		bench_log("applying the policy: %s", err);
	else
		ret = attach_fd(o, dp.prog_fd);
	xrl_policy_free(&policy);
close_dp:
	xrl_datapath_close(&dp);
	return ret;
}

/* A program loaded by someone else (xdp-filter), moved onto our veth. */
static int attach_id(const struct veth_opts *o)
{
	int fd = bpf_prog_get_fd_by_id(o->prog_id);
	int ret;

	if (fd < 0)
		return -errno;
	ret = attach_fd(o, fd);
	close(fd);
	return ret;
}

static int parse_mac(const char *text, __u8 mac[6])
{
	return sscanf(text, "%hhx:%hhx:%hhx:%hhx:%hhx:%hhx", &mac[0], &mac[1],
		      &mac[2], &mac[3], &mac[4], &mac[5]) == 6 ? 0 : -EINVAL;
}

/* RFC 1071 sum of @len bytes, folded to 16 bits (not complemented). */
static __u32 sum16(const void *data, size_t len, __u32 sum)
{
	const __u16 *word = data;

	for (; len > 1; len -= 2)
		sum += *word++;
	if (len)
		sum += *(const __u8 *)word;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/*
 * A UDP datagram to an on-link address that is not the receiver's: with
 * forwarding off, what a filter lets through is dropped by routing at a
 * cost that does not depend on the source (aimed at a local closed port,
 * each new source would also cost an ICMP rate-limit entry, and that
 * kernel state, not the filters', would dominate the spoofed cases).
 * IPv6 needs the UDP checksum; the generator keeps it right.
 */
static int build_frame(const struct veth_opts *o, struct packet *pkt)
{
	struct packet_spec spec = {
		.src = o->ipv6 ? "fd00::1" : "198.18.0.1",
		.dst = o->ipv6 ? "fd00::2" : "198.19.0.2",
	};
	size_t ip_len = o->ipv6 ? sizeof(struct ipv6hdr) : sizeof(struct iphdr);
	size_t l4 = packet_ip_offset(0) + ip_len;
	struct udphdr *udp;
	struct ipv6hdr *ip6;
	__u32 sum;

	if (packet_build(pkt, &spec) || parse_mac(o->dst_mac, pkt->data))
		return -EINVAL;
	udp = (struct udphdr *)(pkt->data + l4);
	udp->source = htons(1024);
	udp->dest = htons(UDP_DISCARD);
	udp->len = htons(pkt->len - l4);
	if (!o->ipv6)
		return 0;	/* an IPv4 UDP checksum of 0 means none */
	ip6 = (struct ipv6hdr *)(pkt->data + packet_ip_offset(0));
	sum = sum16(&ip6->saddr, 32, htons(IPPROTO_UDP) + udp->len);
	sum = sum16(udp, pkt->len - l4, sum);
	udp->check = ~sum ? ~sum : 0xffff;
	return 0;
}

static int generate(const struct veth_opts *o)
{
	struct xdp_md ctx = {};
	LIBBPF_OPTS(bpf_test_run_opts, run,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = GEN_CHUNK,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
	);
	unsigned long long sent = 0;
	struct gen_bpf *skel;
	struct packet pkt;
	uint64_t deadline;
	int ret;

	ret = build_frame(o, &pkt);
	if (ret) {
		bench_log("gen: bad --dst-mac %s", o->dst_mac);
		return ret;
	}
	skel = gen_bpf__open();
	if (!skel)
		return -errno;
	skel->rodata->n_sources = o->sources;
	ret = gen_bpf__load(skel);
	if (ret)
		goto destroy;
	ret = ifindex_in(o->netns, o->dev);
	if (ret < 0)
		goto destroy;
	ctx.ingress_ifindex = ret;
	ctx.data_end = pkt.len;	/* the kernel wants the context to agree */
	run.data_in = pkt.data;
	run.data_size_in = pkt.len;
	deadline = bench_now_ns() + (uint64_t)(o->seconds * NS_PER_S);
	ret = 0;
	while (!ret && bench_now_ns() < deadline) {
		if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.bench_gen),
					   &run))
			ret = -errno;
		else
			sent += GEN_CHUNK;
	}
	if (!ret)
		printf("%llu\n", sent);
destroy:
	gen_bpf__destroy(skel);
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: xrl-bench attach --netns PATH --dev DEV "
		"--prog drop|pass|ref|limiter [--pps N --burst N] "
		"[--no-budget]\n"
		"       xrl-bench attach --netns PATH --dev DEV --prog-id ID\n"
		"       xrl-bench gen --netns PATH --dev DEV --dst-mac MAC "
		"[--sources N] [--seconds S] [--ipv6]\n");
}

static int parse_args(struct veth_opts *o, int argc, char **argv)
{
	static const struct option options[] = {
		{ "netns", required_argument, NULL, 'n' },
		{ "dev", required_argument, NULL, 'd' },
		{ "prog", required_argument, NULL, 'p' },
		{ "pps", required_argument, NULL, 'r' },
		{ "burst", required_argument, NULL, 'b' },
		{ "dst-mac", required_argument, NULL, 'm' },
		{ "sources", required_argument, NULL, 's' },
		{ "seconds", required_argument, NULL, 't' },
		{ "ipv6", no_argument, NULL, '6' },
		{ "no-budget", no_argument, NULL, 'B' },
		{ "prog-id", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	int opt;

	*o = (struct veth_opts){ .pps = 1, .burst = 1, .sources = 1,
				 .seconds = 1 };
	while ((opt = getopt_long(argc, argv, "", options, NULL)) != -1) {
		switch (opt) {
		case 'n': o->netns = optarg; break;
		case 'd': o->dev = optarg; break;
		case 'p': o->prog = optarg; break;
		case 'r': o->pps = strtoull(optarg, NULL, 10); break;
		case 'b': o->burst = strtoull(optarg, NULL, 10); break;
		case 'm': o->dst_mac = optarg; break;
		case 's': o->sources = strtoul(optarg, NULL, 10); break;
		case 't': o->seconds = atof(optarg); break;
		case '6': o->ipv6 = true; break;
		case 'B': o->no_budget = true; break;
		case 'i':
			o->prog = "id";
			o->prog_id = strtoul(optarg, NULL, 10);
			break;
		default:
			usage();
			return -EINVAL;
		}
	}
	if (!o->netns || !o->dev || !o->sources || o->seconds <= 0 ||
	    o->seconds > 60 || (!o->ipv6 && o->sources > 131070)) {
		fprintf(stderr, "xrl-bench: need --netns and --dev, 1 to "
			"131070 IPv4 sources, 0 to 60 seconds\n");
		return -EINVAL;
	}
	return 0;
}

int bench_attach(int argc, char **argv)
{
	struct veth_opts o;
	int ret = parse_args(&o, argc, argv);

	if (ret)
		return ret;
	if (!o.prog) {
		usage();
		return -EINVAL;
	}
	if (!strcmp(o.prog, "limiter"))
		ret = attach_limiter(&o);
	else if (!strcmp(o.prog, "id"))
		ret = attach_id(&o);
	else if (!strcmp(o.prog, "ref"))
		ret = attach_ref(&o);
	else if (!strcmp(o.prog, "drop") || !strcmp(o.prog, "pass"))
		ret = attach_verdict(&o);
	else
		ret = -EINVAL;
	if (ret)
		bench_log("attach %s to %s: %s", o.prog, o.dev, strerror(-ret));
	return ret;
}

int bench_gen(int argc, char **argv)
{
	struct veth_opts o;
	int ret = parse_args(&o, argc, argv);

	if (ret)
		return ret;
	if (!o.dst_mac) {
		usage();
		return -EINVAL;
	}
	ret = generate(&o);
	if (ret)
		bench_log("gen on %s: %s", o.dev, strerror(-ret));
	return ret;
}
