// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Blocklist files (blocklist.h) and the policy's blocklists: key: what a
 * list file may hold, and the worst a stranger's file can be (a huge
 * line, binary junk, one entry over the cap, host bits set, a FIFO),
 * each refused whole in one line naming the file and the line.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include "blocklist.h"
#include "cidr.h"
#include "policy_read.h"
#include "policy_write.h"

static int read_text(const char *text, size_t len, size_t max,
		     struct xrl_blocklist_entries *e, char *err, size_t n)
{
	FILE *in = fmemopen((void *)text, len, "r");
	int ret;

	cr_assert_not_null(in);
	ret = xrl_blocklist_read(in, "drop.txt", max, e, err, n);
	fclose(in);
	return ret;
}

/* The refusal of @text, which must be refused. */
static const char *refusal(const char *text, size_t len, size_t max)
{
	static char err[512];
	struct xrl_blocklist_entries e;

	cr_assert_eq(read_text(text, len, max, &e, err, sizeof(err)), -EINVAL,
		     "accepted: %.40s", text);
	cr_assert_null(e.keys, "nothing kept of a refused file");
	return err;
}

#define REFUSAL(text)	refusal(text, strlen(text), XRL_BLOCKLIST_ENTRIES)

static bool holds(const struct xrl_blocklist_entries *e, const char *cidr)
{
	struct xrl_lpm_key key;
	size_t i;

	cr_assert_eq(xrl_cidr_parse(cidr, &key), 0);
	for (i = 0; i < e->n; i++)
		if (!memcmp(&e->keys[i], &key, sizeof(key)))
			return true;
	return false;
}

Test(blocklist_file, addresses_cidrs_comments_and_blanks)
{
	static const char text[] =
		"# Spamhaus-like\n"
		"\n"
		"198.18.0.0/24 # trailing comment\n"
		"  198.18.9.9\t\r\n"
		"fd00:1::/64\n"
		"fd00::1\n"
		"198.18.0.0/24\n"	/* twice: kept once */
		"   \n"
		"#198.18.10.0/24";
	struct xrl_blocklist_entries e;
	char err[256];

	cr_assert_eq(read_text(text, strlen(text), XRL_BLOCKLIST_ENTRIES, &e,
			       err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(e.n, 4);
	cr_assert_eq(e.lines, 5);
	cr_assert(holds(&e, "198.18.0.0/24"));
	cr_assert(holds(&e, "198.18.9.9"));
	cr_assert(holds(&e, "fd00:1::/64"));
	cr_assert(holds(&e, "fd00::1"));
	xrl_blocklist_entries_free(&e);
}

Test(blocklist_file, a_bad_prefix_names_file_line_and_value)
{
	cr_assert_str_eq(REFUSAL("198.18.0.0/24\n\n1.2.3.4/33\n"),
			 "drop.txt:3: \"1.2.3.4/33\": prefix longer than 32");
	cr_assert_str_eq(REFUSAL("fd00::/129\n"),
			 "drop.txt:1: \"fd00::/129\": prefix longer than 128");
	cr_assert_str_eq(REFUSAL("198.18.0.0/x\n"),
			 "drop.txt:1: \"198.18.0.0/x\": prefix length not a "
			 "number of 0 to 32");
	cr_assert_str_eq(REFUSAL("# ok\nexample.com\n"),
			 "drop.txt:2: \"example.com\": not an IPv4 or IPv6 "
			 "address or CIDR");
	cr_assert_str_eq(REFUSAL("198.18.0.1 198.18.0.2\n"),
			 "drop.txt:1: \"198.18.0.1 198.18.0.2\": not an IPv4 "
			 "or IPv6 address or CIDR");
}

/* Decided: refused, as in rules, naming the network meant. */
Test(blocklist_file, host_bits_set_are_refused)
{
	cr_assert_str_eq(REFUSAL("198.18.0.1/24\n"),
			 "drop.txt:1: \"198.18.0.1/24\": host bits set after "
			 "the prefix length (198.18.0.0/24?)");
	cr_assert_str_eq(REFUSAL("fd00::1/64\n"),
			 "drop.txt:1: \"fd00::1/64\": host bits set after the "
			 "prefix length (fd00::/64?)");
}

Test(blocklist_file, a_huge_line_is_refused_a_huge_comment_is_not)
{
	size_t len = 10u << 20;
	char *text = malloc(len + 32);
	struct xrl_blocklist_entries e;
	const char *err;
	char why[256];

	cr_assert_not_null(text);
	memset(text, '1', len);
	strcpy(text + len, "\n");
	err = refusal(text, len + 1, XRL_BLOCKLIST_ENTRIES);
	cr_assert(strstr(err, "drop.txt:1: \"111111111111"), "%s", err);
	cr_assert(strstr(err, "...\": line longer than 255 bytes"), "%s", err);
	text[0] = '#';
	strcpy(text + len, "\n198.18.0.1\n");
	cr_assert_eq(read_text(text, strlen(text), XRL_BLOCKLIST_ENTRIES, &e,
			       why, sizeof(why)), 0, "%s", why);
	cr_assert_eq(e.n, 1);
	xrl_blocklist_entries_free(&e);
	free(text);
}

Test(blocklist_file, binary_junk_is_refused_shown_escaped)
{
	static const char junk[] = "198.18.0.1\n\x7f" "ELF\x02\x01\x00\x00\n";

	cr_assert_str_eq(refusal(junk, sizeof(junk) - 1, XRL_BLOCKLIST_ENTRIES),
			 "drop.txt:2: \"\\x7fELF\\x02\\x01\": not text (byte "
			 "0x7f)");
}

/* One entry over the cap: refused at that line, nothing kept. */
Test(blocklist_file, one_entry_over_the_cap_refuses_the_list)
{
	size_t n = XRL_BLOCKLIST_ENTRIES + 1, i, len = 0;
	char *text = malloc(n * 24), want[128];
	struct xrl_blocklist_entries e;

	cr_assert_not_null(text);
	for (i = 0; i < n; i++)
		len += (size_t)sprintf(text + len, "fd00::%zx:%zx\n", i >> 16,
				       i & 0xffff);
	snprintf(want, sizeof(want), "drop.txt:%zu: \"fd00::10:0\": more "
		 "than %d entries", n, XRL_BLOCKLIST_ENTRIES);
	cr_assert_str_eq(refusal(text, len, XRL_BLOCKLIST_ENTRIES), want);
	/* The cap itself is taken. */
	len -= strlen("fd00::10:0\n");
	cr_assert_eq(read_text(text, len, XRL_BLOCKLIST_ENTRIES, &e, want,
			       sizeof(want)), 0, "%s", want);
	cr_assert_eq(e.n, XRL_BLOCKLIST_ENTRIES);
	xrl_blocklist_entries_free(&e);
	free(text);
}

Test(blocklist_file, only_a_regular_file_is_read)
{
	char path[64], err[256];
	struct xrl_blocklist_entries e;

	snprintf(path, sizeof(path), "/tmp/xrlt%d-fifo", (int)getpid());
	unlink(path);
	cr_assert_eq(mkfifo(path, 0600), 0);
	cr_assert_eq(xrl_blocklist_load(path, 10, &e, err, sizeof(err)),
		     -EINVAL);
	unlink(path);
	cr_assert(strstr(err, "-fifo: not a regular file"), "%s", err);
	cr_assert_eq(xrl_blocklist_load("/nonexistent/x", 10, &e, err,
					sizeof(err)), -ENOENT);
	cr_assert_str_eq(err, "/nonexistent/x: No such file or directory");
}

static const char *policy_refusal(const char *yaml)
{
	static char err[512];
	struct xrl_config config;

	cr_assert_neq(xrl_config_load_string(yaml, strlen(yaml), "p.yaml",
					     &config, err, sizeof(err)), 0,
		      "accepted: %s", yaml);
	return err;
}

Test(blocklist_file, the_policy_key_checks_its_lists)
{
	cr_assert_str_eq(policy_refusal("blocklists:\n"
					"  - {name: Drop, file: /x}\n"),
			 "p.yaml:2: blocklists[0].name: 1 to 31 of a-z, 0-9, _ "
			 "and - (Drop)");
	cr_assert_str_eq(policy_refusal("blocklists:\n"
					"  - {name: d, file: x.txt}\n"),
			 "p.yaml:2: blocklists[0].file: an absolute path of at "
			 "most 255 bytes (x.txt)");
	cr_assert_str_eq(policy_refusal("blocklists:\n"
					"  - {name: d, file: /a}\n"
					"  - {name: d, file: /b}\n"),
			 "p.yaml:3: blocklists[1]: a second list named d");
	cr_assert_str_eq(policy_refusal("blocklists:\n"
					"  - {name: d}\n"),
			 "p.yaml:2: blocklists[0]: needs a name: and a file:");
	cr_assert(strstr(policy_refusal("blocklists:\n"
					"  - {name: d, file: /a, action: "
					"drop}\n"),
			 "p.yaml:2: blocklists[0].action: "), "%s",
		  policy_refusal("blocklists:\n  - {name: d, file: /a, "
				 "action: drop}\n"));
}

Test(blocklist_file, the_policy_key_is_written_back)
{
	static const char yaml[] =
		"blocklists:\n"
		"  - {name: drop, file: /etc/xdp-ratelimit/drop.txt}\n"
		"  - {name: watch-1, file: /w.txt, action: monitor}\n";
	struct xrl_config config, again;
	char err[256], *text = NULL;
	size_t len = 0, i;
	FILE *out;

	cr_assert_eq(xrl_config_load_string(yaml, strlen(yaml), "p.yaml",
					    &config, err, sizeof(err)), 0,
		     "%s", err);
	cr_assert_eq(config.policy.n_blocklists, 2);
	cr_assert_eq(config.policy.blocklists[0].action, XRL_BLOCKLIST_DENY);
	cr_assert_eq(config.policy.blocklists[1].action,
		     XRL_BLOCKLIST_MONITOR);
	cr_assert(config.policy.blocklists_read);
	out = open_memstream(&text, &len);
	cr_assert_eq(xrl_policy_write_yaml(out, &config.policy), 0);
	fclose(out);
	cr_assert(strstr(text, "{name: watch-1, file: /w.txt, action: "
			       "monitor}"), "%s", text);
	cr_assert_eq(xrl_config_load_string(text, len, "w.yaml", &again, err,
					    sizeof(err)), 0, "%s", err);
	cr_assert_eq(again.policy.n_blocklists, 2);
	for (i = 0; i < 2; i++) {
		cr_assert_str_eq(again.policy.blocklists[i].name,
				 config.policy.blocklists[i].name);
		cr_assert_str_eq(again.policy.blocklists[i].file,
				 config.policy.blocklists[i].file);
		cr_assert_eq(again.policy.blocklists[i].action,
			     config.policy.blocklists[i].action);
	}
	free(text);
	xrl_config_free(&again);
	xrl_config_free(&config);
}
