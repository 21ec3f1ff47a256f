/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * topo.h - the end-to-end topology: two network namespaces joined by a
 * veth pair, addresses from 198.18.0.0/15 and fd00::/8 only, and a pin
 * directory of its own. Every name carries the creating process's pid
 * ("xrlt<pid>..."), so concurrent runs never meet and leftovers of a run
 * that died are recognised (their pid is gone) and removed.
 */
#ifndef XRL_TEST_TOPO_H
#define XRL_TEST_TOPO_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define TOPO_PREFIX "xrlt"

struct topo {
	pid_t pid;
	char ns_tx[32], ns_rx[32];	/* sending and receiving namespaces */
	char if_tx[16], if_rx[16];	/* the veth ends in them */
	char pin_dir[PATH_MAX];
	int tx_ifindex, rx_ifindex;	/* each in its namespace */
	uint8_t tx_mac[6], rx_mac[6];
	const char *cli_prefix;	/* run the CLI under this ("" unless set) */
	const char *cli_ns;	/* and in this namespace (NULL: ns_rx) */
};

/*
 * Removes what a dead run left (namespaces, veths and pin directories
 * whose pid is no longer a process) and what this process made.
 */
void topo_cleanup_leftovers(void);

/* Builds the topology; criterion fails on error (after cleaning up). */
void topo_create(struct topo *t);

/* Removes namespaces (and so the veths), the pin directory (and any
 * "<pin dir>-*" a test made) and the test's files /tmp/xrlt<pid>-*. */
void topo_destroy(struct topo *t);

/* Runs a shell command (formatted); returns its exit status, or -1. */
int topo_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Runs the built xdp-ratelimit in the receiving namespace (or t->cli_ns)
 * with the
 * topology's pin directory and @args; stdout into @out (NUL-terminated,
 * may be NULL), stderr into @err. Returns the exit status.
 */
int topo_cli(const struct topo *t, char *out, size_t out_len, char *err,
	     size_t err_len, const char *args_fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Writes @yaml as the policy file /tmp/xrlt<pid>-policy.yaml and
 * attaches to the receiving veth with it; criterion fails on error. */
void topo_attach_policy(const struct topo *t, const char *yaml);

/* The CLI built beside the tests: build/tests/test-e2e -> build/. */
void topo_cli_path(char *path, size_t len);

/*
 * Lets TCP over IPv4 on @ifindex in namespace @ns build GSO aggregates
 * of up to @size bytes (BIG TCP, over 64 kB: tot_len 0). 0 or -errno.
 */
int topo_set_gso_ipv4_max_size(const char *ns, int ifindex, uint32_t size);
/* The MAC of @ifname in namespace @ns (criterion fails on error), and
 * its ifindex there (or -errno). */
void topo_read_mac(const char *ns, const char *ifname, uint8_t mac[6]);
int topo_ifindex_in(const char *ns, const char *ifname);

/* A socket created in namespace @ns, or -errno. */
int topo_socket_in(const char *ns, int domain, int type, int protocol);

#endif
