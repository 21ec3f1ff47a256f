// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * docgen.c - the parts of the docs made from the code's tables
 * (docgen.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "counters.h"
#include "daemon_opts.h"
#include "docgen.h"
#include "fields.h"
#include "loader.h"
#include "match.h"
#include "units.h"

#define PINS_MAX	64

/* ---- text ----------------------------------------------------------- */

/* @text for troff: dashes and backslashes escaped, a leading dot kept. */
static void troff(FILE *out, const char *text)
{
	if (*text == '.' || *text == '\'')
		fputs("\\&", out);
	for (; *text; text++) {
		if (*text == '-' || *text == '\\')
			fputc('\\', out);
		fputc(*text, out);
	}
}

static void duration(FILE *out, uint64_t ns)
{
	char text[32];

	xrl_duration_ns_format(ns, text, sizeof(text));
	fputs(text, out);
}

/* What a field's value is: its type and bounds. */
static void value_facts(FILE *out, const struct xrl_field *f)
{
	switch (f->type) {
	case XRL_FIELD_QUANTITY:
		fprintf(out, "A quantity (k, M, G), %llu to %llu.\n",
			(unsigned long long)f->min, (unsigned long long)f->max);
		break;
	case XRL_FIELD_DURATION:
		fprintf(out, "A duration (ns, us, ms, s, m, h, d), ");
		if (f->min) {
			duration(out, f->min);
			fprintf(out, " to ");
		} else {
			fprintf(out, "at most ");
		}
		duration(out, f->max);
		fprintf(out, ".\n");
		break;
	case XRL_FIELD_NUMBER:
		fprintf(out, "%llu to %llu.\n", (unsigned long long)f->min,
			(unsigned long long)f->max);
		break;
	case XRL_FIELD_FLAG:
		fprintf(out, "\\fBtrue\\fR or \\fBfalse\\fR.\n");
		break;
	default:
		break;
	}
}

static void mask_words(FILE *out, unsigned mask,
		       const char *(*name)(unsigned value), unsigned count)
{
	unsigned i, seen = 0, n = 0;

	for (i = 0; i < count; i++)
		n += !!(mask & (1U << i));
	for (i = 0; i < count; i++) {
		if (!(mask & (1U << i)))
			continue;
		fputs(!seen ? "" : seen + 1 == n ? " and " : ", ", out);
		fprintf(out, "\\fB%s\\fR", name(i));
		seen++;
	}
}

static const char *action_of(unsigned value)
{
	return xrl_action_name(value);
}

static const char *strategy_of(unsigned value)
{
	return xrl_strategy_name(value);
}

/* What a rule field applies to, and its option. */
static void rule_facts(FILE *out, const struct xrl_field *f)
{
	if (f->actions) {
		fprintf(out, "For ");
		mask_words(out, f->actions, action_of, XRL_ACTION_COUNT);
		fprintf(out, " rules.\n");
	}
	if (f->strategies) {
		fprintf(out, "With strategy ");
		mask_words(out, f->strategies, strategy_of,
			   XRL_STRATEGY_COUNT);
		fprintf(out, ".\n");
	}
	if (f->flags & XRL_FIELD_RULE_ONLY)
		fprintf(out, "Not in \\fBdefault:\\fR.\n");
	if (f->option) {
		fprintf(out, "\\fBrule add \\-\\-");
		troff(out, f->option);
		fprintf(out, "\\fR.\n");
	}
}

/* Whether the help's first word is a value written as is ("source",
 * "token_bucket", "syn:"), which keeps its case. */
static bool starts_with_value(const char *help, const char *const *words)
{
	size_t n = strcspn(help, " ,(");
	size_t i;

	if (memchr(help, '_', n) || (n && help[n - 1] == ':'))
		return true;
	for (i = 0; words && words[i]; i++)
		if (strlen(words[i]) == n && !strncmp(words[i], help, n))
			return true;
	return false;
}

/* A help line as a sentence: a capital first, unless it is a value. */
static void sentence(FILE *out, const char *help, const char *const *words)
{
	char first[2] = { help[0], '\0' };

	if (!starts_with_value(help, words))
		first[0] = (char)toupper((unsigned char)help[0]);
	troff(out, first);
	troff(out, help + 1);
	fprintf(out, ".\n");
}

/* One key of a table: ".TP", the key (under @prefix), its help line and
 * its facts. */
static void key_entry(FILE *out, const char *prefix,
		      const struct xrl_field *f, bool rule)
{
	fprintf(out, ".TP\n.B ");
	troff(out, prefix);
	troff(out, f->key);
	fprintf(out, "\n");
	sentence(out, f->help, f->words);
	value_facts(out, f);
	if (rule)
		rule_facts(out, f);
}

/* ---- the parts ------------------------------------------------------ */

static void policy_keys(FILE *out)
{
	const struct xrl_field *f;
	char prefix[64];
	size_t i, j;

	for (i = 0; i < xrl_n_policy_fields; i++) {
		f = &xrl_policy_fields[i];
		key_entry(out, "", f, false);
		if ((f->type != XRL_FIELD_MAP && f->type != XRL_FIELD_LIST) ||
		    !f->sub || f->sub == xrl_rule_fields)
			continue;
		snprintf(prefix, sizeof(prefix), "%s.", f->key);
		for (j = 0; j < f->n_sub; j++)
			key_entry(out, prefix, &f->sub[j], false);
	}
}

static void rule_keys(FILE *out)
{
	size_t i;

	for (i = 0; i < xrl_n_rule_fields; i++)
		key_entry(out, "", &xrl_rule_fields[i], true);
}

static void level_keys(FILE *out)
{
	size_t i;

	for (i = 0; i < xrl_n_level_fields; i++)
		key_entry(out, "", &xrl_level_fields[i], false);
}

/* ".TP", "-c, --config FILE" and the help of each option of @tables. */
static void option_entries(FILE *out, const struct xrl_opt *const *tables)
{
	struct xrl_opt opts[XRL_OPTS_MAX];
	int i, n = xrl_opts_expand(tables, opts, XRL_OPTS_MAX);

	for (i = 0; i < n; i++) {
		fprintf(out, ".TP\n.%s \"", opts[i].arg ? "BI" : "B");
		if (opts[i].key < XRL_OPT_LONG)
			fprintf(out, "\\-%c, ", opts[i].key);
		fprintf(out, "\\-\\-");
		troff(out, opts[i].name);
		fprintf(out, "%s\"", opts[i].arg ? " " : "");
		if (opts[i].arg) {
			fprintf(out, " ");
			troff(out, opts[i].arg);
		}
		fprintf(out, "\n");
		sentence(out, opts[i].help, NULL);
	}
}

static void cli_options(FILE *out)
{
	option_entries(out, xrl_cli_global_opts);
}

static void command_options(FILE *out)
{
	const struct xrl_cmd *cmd;
	size_t i;

	for (i = 0; xrl_commands[i]; i++) {
		cmd = xrl_commands[i];
		if (!cmd->opts)
			continue;
		fprintf(out, ".SS %s\n", cmd->name);
		option_entries(out, (const struct xrl_opt *const[]){
			cmd->opts, NULL });
	}
}

static void daemon_options(FILE *out)
{
	option_entries(out, xrl_daemon_options);
}

static void verdicts_man(FILE *out)
{
	unsigned v;

	for (v = 0; v < XRL_VERDICT_COUNT; v++) {
		fprintf(out, ".TP\n.B ");
		troff(out, xrl_verdict_name(v));
		fprintf(out, "\n");
		sentence(out, xrl_verdict_help(v), NULL);
	}
}

static void verdicts_md(FILE *out)
{
	unsigned v;

	fprintf(out, "| verdict | counts |\n|---|---|\n");
	for (v = 0; v < XRL_VERDICT_COUNT; v++)
		fprintf(out, "| `%s` | %s |\n", xrl_verdict_name(v),
			xrl_verdict_help(v));
}

static void pins_md(FILE *out)
{
	const char *names[PINS_MAX];
	size_t i, n = xrl_datapath_pin_names(names, PINS_MAX);

	for (i = 0; i < n && i < PINS_MAX; i++)
		fprintf(out, "%s`%s`", i ? ", " : "", names[i]);
	fprintf(out, ", and `link_IFACE` for each interface.\n");
}

/* The values rule add's options take, for the completion. */
static void completion_values(FILE *out)
{
	static const char *const protos[] = { "tcp", "udp", "icmp", "icmpv6",
					      NULL };
	static const char *const tcp_flags[] = { "syn", NULL };
	const char *const *words;
	const struct xrl_field *f;
	size_t i, j;

	for (i = 0; i < xrl_n_rule_fields; i++) {
		f = &xrl_rule_fields[i];
		words = f->type == XRL_FIELD_WORD ? f->words :
			f->type == XRL_FIELD_PROTO ? protos :
			f->type == XRL_FIELD_TCP_FLAGS ? tcp_flags : NULL;
		if (!f->option || !words)
			continue;
		fprintf(out, "\t--%s) _xrl_words \"", f->option);
		for (j = 0; words[j]; j++)
			fprintf(out, "%s%s", j ? " " : "", words[j]);
		fprintf(out, "\" \"$2\" ;;\n");
	}
}

#define MAN5	"docs/man/xdp-ratelimit.yaml.5"
#define MAN8	"docs/man/xdp-ratelimit.8"
#define MAN8D	"docs/man/xdp-ratelimitd.8"
#define TROFF	".\\\""

const struct xrl_doc_part xrl_doc_parts[] = {
	{ MAN5, "top-level keys", TROFF, policy_keys },
	{ MAN5, "rule keys", TROFF, rule_keys },
	{ MAN5, "level keys", TROFF, level_keys },
	{ MAN8, "options", TROFF, cli_options },
	{ MAN8, "command options", TROFF, command_options },
	{ MAN8, "verdicts", TROFF, verdicts_man },
	{ MAN8D, "options", TROFF, daemon_options },
	{ "user/dist/xdp-ratelimit.bash", "option values", "#",
	  completion_values },
	{ "docs/OPERATIONS.md", "verdicts", "<!--", verdicts_md },
	{ "docs/OPERATIONS.md", "pins", "<!--", pins_md },
	{}
};

/* ---- the parts in their files --------------------------------------- */

char *xrl_doc_slurp(const char *path)
{
	FILE *in = fopen(path, "r");
	char *text = NULL;
	size_t size = 0;

	if (!in)
		return NULL;
	if (getdelim(&text, &size, '\0', in) < 0) {
		free(text);
		text = NULL;
	}
	fclose(in);
	return text;
}

static void marker(char *buf, size_t len, const struct xrl_doc_part *part,
		   bool end)
{
	const char *close = !strcmp(part->comment, "<!--") ? " -->" : "";

	if (end)
		snprintf(buf, len, "%s end generated%s\n", part->comment,
			 close);
	else
		snprintf(buf, len, "%s generated: %s (make docs)%s\n",
			 part->comment, part->name, close);
}

/* Where the part's text starts and ends in @text, or -ENOENT. */
static int locate(const struct xrl_doc_part *part, const char *text,
		  const char **start, const char **end)
{
	char begin[160], finish[80];

	marker(begin, sizeof(begin), part, false);
	marker(finish, sizeof(finish), part, true);
	*start = strstr(text, begin);
	if (!*start)
		return -ENOENT;
	*start += strlen(begin);
	*end = strstr(*start, finish);
	if (!*end)
		return -ENOENT;
	/* The end marker's indentation is its own, not the part's. */
	while (*end > *start && ((*end)[-1] == '\t' || (*end)[-1] == ' '))
		(*end)--;
	return 0;
}

static char *make(const struct xrl_doc_part *part)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	if (!out)
		return NULL;
	part->make(out);
	fclose(out);
	return text;
}

int xrl_doc_part_read(const struct xrl_doc_part *part, char **file_text,
		      char **made, char *err, size_t len)
{
	const char *start, *end;
	char *text = xrl_doc_slurp(part->path);

	*file_text = *made = NULL;
	if (!text) {
		snprintf(err, len, "%s: %s", part->path, strerror(errno));
		return -errno;
	}
	if (locate(part, text, &start, &end)) {
		snprintf(err, len, "%s: no \"generated: %s\" part", part->path,
			 part->name);
		free(text);
		return -ENOENT;
	}
	*file_text = strndup(start, (size_t)(end - start));
	*made = make(part);
	free(text);
	return *file_text && *made ? 0 : -ENOMEM;
}

int xrl_doc_part_write(const struct xrl_doc_part *part, char *err, size_t len)
{
	char *text = xrl_doc_slurp(part->path), *made = make(part);
	const char *start, *end;
	FILE *out;
	int ret = -ENOENT;

	if (!text || !made || locate(part, text, &start, &end)) {
		snprintf(err, len, "%s: no \"generated: %s\" part", part->path,
			 part->name);
		goto free_all;
	}
	out = fopen(part->path, "w");
	if (!out) {
		ret = -errno;
		snprintf(err, len, "%s: %s", part->path, strerror(errno));
		goto free_all;
	}
	fwrite(text, 1, (size_t)(start - text), out);
	fputs(made, out);
	fputs(end, out);
	ret = fclose(out) ? -errno : 0;
free_all:
	free(text);
	free(made);
	return ret;
}
