/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fleet.h - real xdp-ratelimitd processes, each attached to a veth of its
 * own, sharing one real redis-server, with real paced senders.
 *
 * One namespace "xrlt<pid>-fleet" holds the receiving veth ends, the
 * daemons and Redis (on its own 127.0.0.1); each node k has a sending
 * namespace "xrlt<pid>-tx<k>" with the peer end. Frames are crafted
 * (sources in 198.18.0.0/15) and sent by an AF_PACKET socket, paced to a
 * rate and bounded in count and time. On a veth the program runs on the
 * sender's CPU, so a sender left to the scheduler moves the traffic
 * between CPUs as RSS and IRQ balancing do in production.
 */
#ifndef XRL_TEST_FLEET_H
#define XRL_TEST_FLEET_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "datapath.h"
#include "redis_testbed.h"

#define FLEET_MAX_NODES 3

struct fleet_node {
	char name[16];			/* in Redis (--node) */
	char ns_tx[32];
	char if_tx[16], if_rx[16];
	int tx_ifindex;
	uint8_t rx_mac[6], tx_mac[6];
	char pin_dir[PATH_MAX];
	char files[64];			/* /tmp/xrlt<pid>-n<k>: .yaml .log ... */
	pid_t daemon;
	struct xrl_datapath dp;		/* the test's view of its pins */
	bool open;
	pid_t sender;
	int sent_fd;			/* the sender reports its count here */
};

struct fleet {
	pid_t pid;
	char ns[32];
	int n;
	struct fleet_node node[FLEET_MAX_NODES];
	struct redis_server redis;
	const char *redis_address;	/* set: "redis:" for the daemons
					 * (a cluster the test runs) */
};

/* Namespaces, veths and a redis-server in the fleet's namespace (when
 * @with_redis); criterion fails on error, after cleaning up. */
void fleet_create(struct fleet *f, int n, bool with_redis);
/* Stops senders and daemons (by pid) and Redis, removes everything. */
void fleet_destroy(struct fleet *f);

/* Moves the calling process into the fleet's namespace (for a Redis
 * Cluster the test itself starts and drives there). */
void fleet_enter(struct fleet *f);

/* Starts node @k's daemon on @yaml (the rules; "redis:" is added when the
 * fleet has Redis), attached to its veth; waits until it listens. */
void fleet_start_daemon(struct fleet *f, int k, const char *yaml);

/* Packets rule of @src admitted and refused on node @k, from its maps. */
uint64_t fleet_admitted(struct fleet *f, int k, const char *src);
uint64_t fleet_refused(struct fleet *f, int k, const char *src);

/* Packets of @src's (aggregate) rule that arrived on each CPU of node
 * @k, into @per_cpu (at most @max); returns how many CPUs. */
unsigned fleet_cpu_arrivals(struct fleet *f, int k, const char *src,
			    uint64_t *per_cpu, unsigned max);

/* Starts node @k's sender: frames from @src at @pps for @seconds, on any
 * CPU (its affinity is every CPU). */
void fleet_send(struct fleet *f, int k, const char *src, unsigned pps,
		double seconds);
/* Pins node @k's sender to @cpu (-1: every CPU again). */
void fleet_move_sender(struct fleet *f, int k, int cpu);
/* Waits for node @k's sender; returns the frames it sent. */
uint64_t fleet_send_wait(struct fleet *f, int k);

/* The daemon's log of node @k so far (static). */
const char *fleet_log(struct fleet *f, int k);

double fleet_now(void);
void fleet_sleep(double seconds);

#endif
