// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * options.c - command-line options from tables (options.h).
 */
#include <errno.h>
#include <string.h>
#include "fields.h"
#include "options.h"

#define HELP_COLUMN	25	/* where help lines start */
#define LINE_MAX_COLS	80

/* The options of a field table: the keys that have one. */
static int expand_fields(const struct xrl_opt *o, struct xrl_opt *out,
			 size_t n, size_t max)
{
	const struct xrl_field *f;
	size_t i;

	for (i = 0; o->fields[i].key; i++) {
		f = &o->fields[i];
		if (!f->option)
			continue;
		if (n == max)
			return -E2BIG;
		out[n++] = (struct xrl_opt){
			.name = f->option,
			.key = XRL_OPT_FIELD + (int)i,
			.arg = f->arg,
			.help = f->help,
		};
	}
	return (int)n;
}

int xrl_opts_expand(const struct xrl_opt *const *tables, struct xrl_opt *out,
		    size_t max)
{
	const struct xrl_opt *o;
	size_t t;
	int n = 0;

	for (t = 0; tables[t]; t++) {
		for (o = tables[t]; o->name; o++) {
			if (!o->name[0]) {
				n = expand_fields(o, out, (size_t)n, max);
				if (n < 0)
					return n;
				continue;
			}
			if ((size_t)n == max)
				return -E2BIG;
			out[n++] = *o;
		}
	}
	return n;
}

int xrl_opts_getopt(const struct xrl_opt *const *tables, const char *lead,
		    char *shorts, size_t shorts_len, struct option *longs,
		    size_t n_longs)
{
	struct xrl_opt opts[XRL_OPTS_MAX];
	size_t s = 0, i;
	int n = xrl_opts_expand(tables, opts, XRL_OPTS_MAX);

	if (n < 0 || (size_t)n >= n_longs ||
	    strlen(lead) + 2 * (size_t)n >= shorts_len)
		return -E2BIG;
	s = strlen(lead);
	memcpy(shorts, lead, s);
	for (i = 0; i < (size_t)n; i++) {
		longs[i] = (struct option){ opts[i].name, opts[i].arg ?
			required_argument : no_argument, NULL, opts[i].key };
		if (opts[i].key >= XRL_OPT_LONG)
			continue;
		shorts[s++] = (char)opts[i].key;
		if (opts[i].arg)
			shorts[s++] = ':';
	}
	shorts[s] = '\0';
	longs[n] = (struct option){ 0 };
	return 0;
}

/* @text from column @at on, wrapped at spaces before LINE_MAX_COLS. */
static void print_wrapped(FILE *out, const char *text, int at)
{
	int width = LINE_MAX_COLS - HELP_COLUMN;
	const char *end, *space;

	while ((int)strlen(text) > width) {
		end = text + width;
		for (space = end; space > text && *space != ' '; space--)
			;
		if (space == text)
			break;	/* one word longer than a line */
		fprintf(out, "%.*s\n%*s", (int)(space - text), text, at, "");
		text = space + 1;
	}
	fprintf(out, "%s\n", text);
}

void xrl_opts_print(FILE *out, const struct xrl_opt *const *tables)
{
	struct xrl_opt opts[XRL_OPTS_MAX];
	int n = xrl_opts_expand(tables, opts, XRL_OPTS_MAX), i, used;
	char left[64];

	for (i = 0; i < n; i++) {
		if (opts[i].key < XRL_OPT_LONG)
			snprintf(left, sizeof(left), "-%c, --%s%s%s",
				 opts[i].key, opts[i].name,
				 opts[i].arg ? " " : "", opts[i].arg ?: "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s",
				 opts[i].name, opts[i].arg ? " " : "",
				 opts[i].arg ?: "");
		used = fprintf(out, "  %-*s ", HELP_COLUMN - 3, left);
		if (used > HELP_COLUMN)
			fprintf(out, "\n%*s", HELP_COLUMN, "");
		print_wrapped(out, opts[i].help, HELP_COLUMN);
	}
}
