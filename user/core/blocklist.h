/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * blocklist.h - blocklist feeds: the policy's blocklists: key (a list of
 * {name, file, action}, fields.c) and the list files it names, one
 * address or CIDR a line (cidr.h), read whole or refused whole. How the
 * data path holds them: include/xrl.h ("Blocklist feeds").
 */
#ifndef XRL_BLOCKLIST_H
#define XRL_BLOCKLIST_H

#include <stdio.h>
#include <stddef.h>
#include "policy.h"
#include "xrl.h"
#include "yaml_walk.h"

/* A list file read: its prefixes, sorted and each once. */
struct xrl_blocklist_entries {
	struct xrl_lpm_key *keys;
	size_t n;
	size_t lines;		/* entries as written, duplicates too */
};

/* Longest line a list file may hold, comments aside. */
#define XRL_BLOCKLIST_LINE_MAX	255

/*
 * Reads the list file @path: one address or CIDR a line (IPv4 or IPv6),
 * "#" to the end of a line a comment, blank lines skipped; host bits set
 * after the prefix length are refused, as in rules. At most @max
 * entries. All or nothing: -errno with one line in @err naming the file
 * and the line ("drop.txt:17: \"1.2.3.4/33\": prefix longer than 32"),
 * and nothing in @out. The file must be a regular file.
 */
int xrl_blocklist_load(const char *path, size_t max,
		       struct xrl_blocklist_entries *out, char *err,
		       size_t len);
/* The same from @in, named @name in the refusal. */
int xrl_blocklist_read(FILE *in, const char *name, size_t max,
		       struct xrl_blocklist_entries *out, char *err,
		       size_t len);
void xrl_blocklist_entries_free(struct xrl_blocklist_entries *e);

/* Reads every list file of @policy, as applying it would, keeping
 * nothing: 0, or -errno with "blocklists: NAME: ..." in @err. */
int xrl_blocklists_check(const struct xrl_policy *policy, char *err,
			 size_t len);

/* The list named @name of @policy, or NULL. */
const struct xrl_blocklist_spec *
xrl_blocklist_find(const struct xrl_policy *policy, const char *name);

/* The policy file's blocklists: (policy_read.c's reader of the key). */
int xrl_blocklists_read_yaml(struct xrl_yaml *y, const char *field,
			     yaml_node_t *value, const struct xrl_field *f,
			     void *target);

#endif
