/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * options.h - command-line options as tables, for both programs (after
 * xdp-tools' lib/util/params.c): each option once, with its long name,
 * its letter, its argument and its help line. getopt's strings, --help,
 * the man pages' lists and the completion (tests/docs checks both) are
 * all made from them, so no help can offer an option the parser refuses.
 */
#ifndef XRL_OPTIONS_H
#define XRL_OPTIONS_H

#include <getopt.h>
#include <stddef.h>
#include <stdio.h>

struct xrl_field;

struct xrl_opt {
	const char *name;	/* long name, without "--"; NULL ends a table */
	int key;		/* its short letter, or XRL_OPT_LONG + n */
	const char *arg;	/* what the help calls its argument; NULL: none */
	const char *help;	/* one line */
	/* With name "": stands for the options of the keys of @fields
	 * that have one (fields.h), keyed XRL_OPT_FIELD + their index. */
	const struct xrl_field *fields;
};

#define XRL_OPT_LONG	256	/* keys from here on have no short letter */
#define XRL_OPT_FIELD	1024	/* keys of the options of a field table */
#define XRL_OPTS_MAX	48	/* options of one command, expanded */

/* An option of a table; the options of the keys of a field table. */
#define XRL_OPT(n, k, a, h)		{ .name = (n), .key = (k), .arg = (a), \
					  .help = (h) }
#define XRL_OPT_FIELDS(table)		{ .name = "", .fields = (table) }

/*
 * The options of the tables of @tables (a NULL-ended list), field entries
 * expanded, into @out. Returns how many, or -E2BIG past @max.
 */
int xrl_opts_expand(const struct xrl_opt *const *tables, struct xrl_opt *out,
		    size_t max);

/*
 * getopt_long()'s option string, @lead first ("+": stop at the first
 * argument; ":": tell a missing argument from an unknown option), and
 * its table of long options, for the options of @tables. 0 or -E2BIG.
 */
int xrl_opts_getopt(const struct xrl_opt *const *tables, const char *lead,
		    char *shorts, size_t shorts_len, struct option *longs,
		    size_t n_longs);

/* "  -c, --config FILE     help" lines of the options of @tables, the
 * help wrapped to 80 columns. */
void xrl_opts_print(FILE *out, const struct xrl_opt *const *tables);

#endif
