/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * fields.h - every key of a policy, once: the fields of a rule, of a
 * rule's level and of the policy file's top level, each one entry with
 * its type, where its value lives, its bounds and words, what it applies
 * to, its rule add option and its help line.
 *
 * The YAML reader and writer (policy_read.c, policy_write.c), the JSON
 * reader and printer of the control socket and the overlay (rule_json.c),
 * rule add's options (the CLI's cmd_rule.c) and the man pages' key lists
 * (tests/docs) all walk these tables: a new key of a type they know is
 * one entry, plus whatever it means to the checks and the data path.
 */
#ifndef XRL_FIELDS_H
#define XRL_FIELDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "xrl.h"

enum xrl_field_type {
	XRL_FIELD_NAME,		/* a rule's name, judged with its cidr */
	XRL_FIELD_CIDR,		/* a prefix: struct xrl_lpm_key */
	XRL_FIELD_WORD,		/* one of @words: an enum, by value */
	XRL_FIELD_FLAG,		/* true or false: a bool */
	XRL_FIELD_NUMBER,	/* a whole number, @min to @max */
	XRL_FIELD_QUANTITY,	/* "10k", "2.5M": @min to @max */
	XRL_FIELD_DURATION,	/* "500ms", "30s": ns, @min to @max */
	XRL_FIELD_PROTO,	/* "tcp": a struct xrl_rule_match's proto */
	XRL_FIELD_PORTS,	/* "80", "1024-65535": __u16 lo, hi; @bit */
	XRL_FIELD_TCP_FLAGS,	/* "syn": @bit of the match's flags */
	XRL_FIELD_LEVELS,	/* a list of levels (xrl_level_fields) */
	/* Only at the policy file's top level, each read by its own code: */
	XRL_FIELD_MAP,		/* a map of the keys of @sub */
	XRL_FIELD_LIST,		/* a list */
	XRL_FIELD_TEXT,		/* a string */
};

/* flags */
#define XRL_FIELD_RULE_ONLY	0x01	/* not a key of default: */
#define XRL_FIELD_ALWAYS	0x02	/* written even when 0 */
#define XRL_FIELD_SHOWN		0x04	/* in JSON even when 0 */
#define XRL_FIELD_CHECKED	0x08	/* its maximum is the rule check's:
					 * the control socket takes more */
#define XRL_FIELD_LISTED	0x10	/* a setting rule.list shows */
#define XRL_FIELD_DAEMON	0x20	/* the daemon's, not the policy's */

/* What rule fields apply to: the limited actions, the bucket strategies. */
#define XRL_LIMITED		((1U << XRL_ACTION_LIMIT) | \
				 (1U << XRL_ACTION_MONITOR))
#define XRL_BUCKETS		((1U << XRL_STRATEGY_TOKEN_BUCKET) | \
				 (1U << XRL_STRATEGY_LEAKY_BUCKET))

struct xrl_field {
	const char *key;		/* in the file and the protocol */
	enum xrl_field_type type;
	size_t offset, size;		/* of the value in the table's struct */
	size_t line_offset;		/* of an int for its line, or 0 */
	uint64_t min, max;		/* NUMBER, QUANTITY, DURATION */
	const char *const *words;	/* WORD: by value, NULL-ended */
	__u8 bit;			/* PORTS, TCP_FLAGS: XRL_MATCH_* */
	unsigned flags;			/* XRL_FIELD_* */
	unsigned actions;		/* 1 << action it applies to; 0: all */
	unsigned strategies;		/* 1 << strategy it fits; 0: all */
	const struct xrl_field *sub;	/* MAP, LEVELS: the keys inside */
	size_t n_sub;
	const char *option;		/* rule add's --OPTION, or NULL */
	const char *arg;		/* its value in --help; NULL: a flag */
	const char *help;		/* one line, for --help and the docs */
	/* Words of refusals, beside those of its type: */
	const char *noun;		/* WORD: "unknown NOUN, expected ..." */
	const char *expected;		/* what a refusal says is expected */
	const char *examples;		/* DURATION: "30s, 10m or 7d" */
	const char *range;		/* out of bounds; NULL: "over the
					 * maximum MAX" */
	const char *zero;		/* a refused 0; NULL: as @range */
};

/* The keys of a rule (default: takes those without RULE_ONLY), of one
 * of its levels, and of the policy file, in the order they are written;
 * each table ends with an entry of no key. */
extern const struct xrl_field xrl_rule_fields[];
extern const size_t xrl_n_rule_fields;
extern const struct xrl_field xrl_level_fields[];
extern const size_t xrl_n_level_fields;
extern const struct xrl_field xrl_policy_fields[];
extern const size_t xrl_n_policy_fields;
/* The keys of one list of blocklists: (struct xrl_blocklist_spec). */
extern const struct xrl_field xrl_blocklist_fields[];
extern const size_t xrl_n_blocklist_fields;

/* The entry of @key in a table, or NULL. */
const struct xrl_field *xrl_field_find(const struct xrl_field *table,
				       size_t n, const char *key);
/* The entry of rule add's --@option, or NULL. */
const struct xrl_field *xrl_rule_field_of_option(const char *option);

/*
 * Who reads a value decides how a refusal is worded: a policy file says
 * "what is wrong" and shows the value after it ("FIELD: not a whole
 * number (1.5)"), the control socket quotes the value inside one line
 * that starts with the key ("pps: \"1.5\" is not a quantity ...").
 */
enum xrl_field_style {
	XRL_STYLE_FILE,
	XRL_STYLE_SOCKET,
};

/*
 * Parses @text into the value of @f in @obj (a struct of @f's table).
 * The file's style checks every bound; the socket's leaves quantities,
 * and the maxima of CHECKED fields, to the rule check. -EINVAL with the
 * refusal in @why: the words alone for the file's style, the whole line
 * for the socket's.
 */
int xrl_field_parse(const struct xrl_field *f, const char *text, void *obj,
		    enum xrl_field_style style, char *why, size_t len);

/* Whether a writer writes @f of @obj: not 0, or ALWAYS (or SHOWN, for
 * @json). LEVELS: when the rule has any; the match's keys: when set. */
bool xrl_field_is_set(const struct xrl_field *f, const void *obj, bool json);
/* The value as the formats write it: "10k", "30s", "tcp", "80-90". */
void xrl_field_format(const struct xrl_field *f, const void *obj, char *buf,
		      size_t len);
/* The number of a NUMBER, QUANTITY, DURATION or WORD; a FLAG's 0 or 1;
 * and a number set as such. */
uint64_t xrl_field_value(const struct xrl_field *f, const void *obj);
void xrl_field_set_value(const struct xrl_field *f, void *obj,
			 uint64_t value);

/* Words of every WORD field: names by value ("?" out of range), and
 * parse functions returning -EINVAL for other text. */
const char *xrl_action_name(enum xrl_action action);
int xrl_action_parse(const char *text, enum xrl_action *action);
const char *xrl_scope_name(enum xrl_scope scope);
int xrl_scope_parse(const char *text, enum xrl_scope *scope);
const char *xrl_strategy_name(enum xrl_strategy strategy);
int xrl_strategy_parse(const char *text, enum xrl_strategy *strategy);
const char *xrl_unknown_name(enum xrl_unknown_verdict verdict);
int xrl_unknown_parse(const char *text, enum xrl_unknown_verdict *verdict);
const char *xrl_blocklist_action_name(enum xrl_blocklist_action action);

#endif
