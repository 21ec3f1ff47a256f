// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * The docs against the code (after the kernel's test_bpftool_synctypes.py,
 * which checks bpftool's man pages and completion against its sources):
 * every list below is made from the code's own tables, so a key, option,
 * verdict or pin added there and not to the docs fails here, and
 * `make docs` writes the parts of the docs the tables make.
 *
 * Run from the top of the tree (make test does). XRL_DOCS_WRITE=1 writes
 * the generated parts instead of comparing them (make docs).
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cmd.h"
#include "counters.h"
#include "daemon_opts.h"
#include "docgen.h"
#include "fields.h"
#include "loader.h"
#include "xdp_ratelimit.skel.h"

#define MAN5		"docs/man/xdp-ratelimit.yaml.5"
#define MAN8		"docs/man/xdp-ratelimit.8"
#define MAN8D		"docs/man/xdp-ratelimitd.8"
#define POLICY_MD	"docs/POLICY.md"
#define OPERATIONS_MD	"docs/OPERATIONS.md"
#define COMPLETION	"user/dist/xdp-ratelimit.bash"
#define PINS_MAX	64

TestSuite(docs);

static const char *build_dir(void)
{
	const char *dir = getenv("XRL_BUILD");

	return dir && dir[0] ? dir : "build";
}

Test(docs, every_generated_part_of_the_docs_is_what_the_tables_make)
{
	bool write = getenv("XRL_DOCS_WRITE") != NULL;
	const struct xrl_doc_part *part;
	char *in_file, *made, err[512];

	for (part = xrl_doc_parts; part->path; part++) {
		if (write) {
			cr_assert_eq(xrl_doc_part_write(part, err, sizeof(err)),
				     0, "%s", err);
			continue;
		}
		cr_assert_eq(xrl_doc_part_read(part, &in_file, &made, err,
					       sizeof(err)), 0, "%s", err);
		cr_expect_str_eq(in_file, made, "%s: the part \"%s\" is not "
				 "what the code's tables make: run make docs",
				 part->path, part->name);
		free(in_file);
		free(made);
	}
}

/* Whether @text holds @word in backticks, or, for a man page, bold. */
static bool mentions(const char *text, const char *word, bool man)
{
	char quoted[160];

	if (man)
		snprintf(quoted, sizeof(quoted), ".B %s\n", word);
	else
		snprintf(quoted, sizeof(quoted), "`%s", word);
	return strstr(text, quoted) != NULL;
}

/* The key of @f as the docs name it: "events.quiet_period". */
static void key_of(const char *parent, const struct xrl_field *f, char *buf,
		   size_t len)
{
	snprintf(buf, len, "%s%s%s", parent ? parent : "", parent ? "." : "",
		 f->key);
}

static void check_keys(const char *man, const char *md,
		       const struct xrl_field *table, size_t n,
		       const char *parent)
{
	const struct xrl_field *f;
	char key[96];

	for (f = table; f < table + n; f++) {
		key_of(parent, f, key, sizeof(key));
		cr_expect(mentions(man, key, true), MAN5 " lacks %s", key);
		cr_expect(mentions(md, f->key, false), POLICY_MD " lacks `%s`",
			  f->key);
		if ((f->type == XRL_FIELD_MAP || f->type == XRL_FIELD_LIST) &&
		    f->sub && f->sub != xrl_rule_fields)
			check_keys(man, md, f->sub, f->n_sub, f->key);
	}
}

Test(docs, every_policy_key_is_in_the_yaml_man_page_and_policy_md)
{
	char *man = xrl_doc_slurp(MAN5), *md = xrl_doc_slurp(POLICY_MD);

	cr_assert(man && md, "reading " MAN5 " and " POLICY_MD);
	check_keys(man, md, xrl_policy_fields, xrl_n_policy_fields, NULL);
	check_keys(man, md, xrl_rule_fields, xrl_n_rule_fields, NULL);
	check_keys(man, md, xrl_level_fields, xrl_n_level_fields, NULL);
	free(man);
	free(md);
}

/* "\-\-name" of each option of @tables in @man. */
static void check_options(const char *path, const char *man,
			  const struct xrl_opt *const *tables)
{
	struct xrl_opt opts[XRL_OPTS_MAX];
	int i, n = xrl_opts_expand(tables, opts, XRL_OPTS_MAX);
	char escaped[96];
	const char *c;
	size_t k;

	cr_assert_geq(n, 0);
	for (i = 0; i < n; i++) {
		k = (size_t)snprintf(escaped, sizeof(escaped), "\\-\\-");
		for (c = opts[i].name; *c && k + 3 < sizeof(escaped); c++) {
			if (*c == '-')
				escaped[k++] = '\\';
			escaped[k++] = *c;
		}
		escaped[k] = '\0';
		cr_expect(strstr(man, escaped), "%s lacks --%s", path,
			  opts[i].name);
	}
}

Test(docs, every_rule_key_is_a_field_of_rule_add_in_protocol_md)
{
	char *md = xrl_doc_slurp("docs/PROTOCOL.md");
	size_t i;

	cr_assert_not_null(md, "reading docs/PROTOCOL.md");
	for (i = 0; i < xrl_n_rule_fields; i++)
		cr_expect(mentions(md, xrl_rule_fields[i].key, false),
			  "docs/PROTOCOL.md lacks `%s`",
			  xrl_rule_fields[i].key);
	free(md);
}

Test(docs, every_option_of_both_programs_is_in_its_man_page)
{
	char *man = xrl_doc_slurp(MAN8), *mand = xrl_doc_slurp(MAN8D);
	size_t i;

	cr_assert(man && mand, "reading the man pages");
	check_options(MAN8, man, xrl_cli_global_opts);
	for (i = 0; xrl_commands[i]; i++)
		if (xrl_commands[i]->opts)
			check_options(MAN8, man, (const struct xrl_opt *const[]){
				xrl_commands[i]->opts, NULL });
	check_options(MAN8D, mand, xrl_daemon_options);
	free(man);
	free(mand);
}

Test(docs, every_command_is_in_the_man_page)
{
	static const char *const macros[] = { ".B ", ".BR ", ".BI " };
	char *man = xrl_doc_slurp(MAN8), *commands, want[64];
	bool found;
	size_t i, m;

	cr_assert(man, "reading " MAN8);
	commands = strstr(man, "\n.SH COMMANDS\n");
	cr_assert(commands, MAN8 " has no COMMANDS section");
	for (i = 0; xrl_commands[i]; i++) {
		for (m = 0, found = false; m < 3 && !found; m++) {
			snprintf(want, sizeof(want), "\n.TP\n%s%s ",
				 macros[m], xrl_commands[i]->name);
			found = strstr(commands, want) != NULL;
		}
		cr_expect(found, MAN8 " COMMANDS lacks %s",
			  xrl_commands[i]->name);
	}
	free(man);
}

/*
 * The words bash's completion offers after @line (the word being
 * completed last, maybe empty), run with the completion script loaded.
 */
static char *complete(const char *line)
{
	char command[1024], *words = NULL;
	size_t size = 0;
	FILE *out;

	snprintf(command, sizeof(command), "bash -c '. " COMPLETION "; "
		 "COMP_WORDS=(%s); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); "
		 "case ${COMP_WORDS[0]} in *d) _xdp_ratelimitd ;; "
		 "*) _xdp_ratelimit ;; esac; echo \" ${COMPREPLY[*]} \"' "
		 "2>/dev/null", line);
	out = popen(command, "r");
	if (!out)
		return NULL;
	if (getdelim(&words, &size, '\0', out) < 0) {
		free(words);
		words = NULL;
	}
	pclose(out);
	return words;
}

static void check_offered(const char *line,
			  const struct xrl_opt *const *tables)
{
	struct xrl_opt opts[XRL_OPTS_MAX];
	int i, n = xrl_opts_expand(tables, opts, XRL_OPTS_MAX);
	char *words = complete(line), want[96];

	cr_assert_not_null(words, "completing %s", line);
	for (i = 0; i < n; i++) {
		snprintf(want, sizeof(want), " --%s ", opts[i].name);
		cr_expect(strstr(words, want), "completing '%s' offers no "
			  "--%s (%s)", line, opts[i].name, words);
	}
	free(words);
}

Test(docs, every_option_of_both_programs_is_offered_by_the_completion)
{
	const struct xrl_cmd *cmd;
	char line[128];
	size_t i;

	snprintf(line, sizeof(line), "%s/xdp-ratelimitd --", build_dir());
	check_offered(line, xrl_daemon_options);
	for (i = 0; xrl_commands[i]; i++) {
		cmd = xrl_commands[i];
		snprintf(line, sizeof(line), "%s/xdp-ratelimit %s --",
			 build_dir(), cmd->name);
		check_offered(line, (const struct xrl_opt *const[]){
			cmd->opts ? cmd->opts : (const struct xrl_opt[]){ {} },
			NULL });
	}
}

Test(docs, every_verdict_is_in_the_docs_lists)
{
	char *man = xrl_doc_slurp(MAN8), *ops = xrl_doc_slurp(OPERATIONS_MD);
	char want[64];
	unsigned v;

	cr_assert(man && ops, "reading " MAN8 " and " OPERATIONS_MD);
	for (v = 0; v < XRL_VERDICT_COUNT; v++) {
		snprintf(want, sizeof(want), "`%s`", xrl_verdict_name(v));
		cr_expect(strstr(ops, want), OPERATIONS_MD " lacks %s", want);
		cr_expect(mentions(man, xrl_verdict_name(v), true),
			  MAN8 " lacks the verdict %s", xrl_verdict_name(v));
	}
	free(man);
	free(ops);
}

Test(docs, every_pin_is_in_the_bpftool_section)
{
	char *ops = xrl_doc_slurp(OPERATIONS_MD), *section, *next, want[64];
	const char *names[PINS_MAX];
	size_t i, n = xrl_datapath_pin_names(names, PINS_MAX);

	cr_assert_not_null(ops, "reading " OPERATIONS_MD);
	section = strstr(ops, "\n## Reading the maps with bpftool");
	cr_assert_not_null(section, OPERATIONS_MD " has no bpftool section");
	next = strstr(section + 1, "\n## ");
	if (next)
		*next = '\0';
	for (i = 0; i < n && i < PINS_MAX; i++) {
		snprintf(want, sizeof(want), "`%s`", names[i]);
		cr_expect(strstr(section, want), "the bpftool section lacks "
			  "the pin %s", names[i]);
	}
	free(ops);
}

/* "`NAME`, ENTRIES x SIZE bytes" in OPERATIONS.md, the memory text, is
 * the map's shape in the program (the per-CPU copies, not pinned: the
 * one place an operator learns what they cost). */
static void expect_map_size(const char *ops, const struct bpf_map *map)
{
	char want[128];

	snprintf(want, sizeof(want), "`%s`, %u x %u bytes", bpf_map__name(map),
		 bpf_map__max_entries(map), bpf_map__value_size(map));
	cr_expect(strstr(ops, want), OPERATIONS_MD " does not say %s", want);
}

Test(docs, the_per_cpu_copies_are_the_size_operations_md_says)
{
	char *ops = xrl_doc_slurp(OPERATIONS_MD);
	struct xdp_ratelimit_bpf *skel = xdp_ratelimit_bpf__open();

	cr_assert_not_null(ops, "reading " OPERATIONS_MD);
	cr_assert_not_null(skel, "opening the program");
	expect_map_size(ops, skel->maps.xrl_rule_cache);
	expect_map_size(ops, skel->maps.xrl_level_cache);
	xdp_ratelimit_bpf__destroy(skel);
	free(ops);
}

Test(docs, the_file_graph_of_user_has_no_circle_and_no_file_is_long)
{
	char command[256];

	snprintf(command, sizeof(command), "scripts/check-layout %s",
		 build_dir());
	cr_assert_eq(system(command), 0, "scripts/check-layout found a "
		     "circle or a long file (its lines above say which)");
}
