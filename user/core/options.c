// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * options.c - command-line options from tables (options.h).
 */
#include <errno.h>
#include <string.h>
#include "fields.h"
#include "options.h"

#define LEFT_MAX	24	/* option columns, longer ones on a line of
				 * their own */
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
	int width = LINE_MAX_COLS - at;
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

/* "-c, --config FILE" or "    --state FILE". */
static void left_of(const struct xrl_opt *o, char *buf, size_t len)
{
	if (o->key < XRL_OPT_LONG)
		snprintf(buf, len, "-%c, --%s%s%s", o->key, o->name,
			 o->arg ? " " : "", o->arg ?: "");
	else
		snprintf(buf, len, "    --%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ?: "");
}

void xrl_opts_print(FILE *out, const struct xrl_opt *const *tables)
{
	struct xrl_opt opts[XRL_OPTS_MAX];
	int n = xrl_opts_expand(tables, opts, XRL_OPTS_MAX), i, width = 0;
	char left[64];

	/* Help lines start two columns after the widest option's. */
	for (i = 0; i < n; i++) {
		left_of(&opts[i], left, sizeof(left));
		if ((int)strlen(left) > width)
			width = (int)strlen(left);
	}
	if (width > LEFT_MAX)
		width = LEFT_MAX;
	for (i = 0; i < n; i++) {
		left_of(&opts[i], left, sizeof(left));
		if ((int)strlen(left) > width)
			fprintf(out, "  %s\n%*s", left, width + 4, "");
		else
			fprintf(out, "  %-*s  ", width, left);
		print_wrapped(out, opts[i].help, width + 4);
	}
}
