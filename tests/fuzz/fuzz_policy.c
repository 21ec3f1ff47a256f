// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for the policy file parser. Besides what the
 * sanitizers catch, it checks the parser's promises on every input:
 * a refusal is one line naming the file and leaves nothing to free; an
 * accepted policy writes back to YAML that loads to the same policy.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "policy_read.h"
#include "policy_write.h"

static void same_policy_or_abort(const struct xrl_policy *a,
				 const struct xrl_policy *b)
{
	size_t i;

	if (a->v4_prefix != b->v4_prefix || a->v6_prefix != b->v6_prefix ||
	    a->malformed != b->malformed || a->n_rules != b->n_rules ||
	    a->new_pps != b->new_pps || a->new_burst != b->new_burst ||
	    a->new_sources_off != b->new_sources_off ||
	    a->unknown != b->unknown)
		abort();
	for (i = 0; i < a->n_rules; i++) {
		struct xrl_rule_spec x = a->rules[i], y = b->rules[i];
		unsigned k;

		x.line = y.line = 0;	/* lines belong to each text */
		for (k = 0; k < XRL_LEVELS_MAX; k++)
			x.levels[k].line = y.levels[k].line = 0;
		if (memcmp(&x, &y, sizeof(x)))
			abort();
	}
}

static char *write_or_abort(const struct xrl_policy *policy, size_t *len)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);

	if (!out || xrl_policy_write_yaml(out, policy))
		abort();
	fclose(out);
	return text;
}

/* Load -> write -> load gives the same policy; and writing that gives the
 * same text, which covers every key the writer knows (new ones too). */
static void round_trip(const struct xrl_policy *policy)
{
	struct xrl_config again;
	char err[1024], *text, *text2;
	size_t len, len2;

	text = write_or_abort(policy, &len);
	if (xrl_config_load_string(text, len, "written", &again, err,
				   sizeof(err))) {
		fprintf(stderr, "written policy refused: %s\n%s", err, text);
		abort();
	}
	same_policy_or_abort(policy, &again.policy);
	text2 = write_or_abort(&again.policy, &len2);
	if (len != len2 || memcmp(text, text2, len)) {
		fprintf(stderr, "written twice, differs:\n%s---\n%s", text, text2);
		abort();
	}
	xrl_config_free(&again);
	free(text);
	free(text2);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct xrl_config empty;
	struct xrl_config config;
	char err[1024];

	if (xrl_config_load_string((const char *)data, size, "fuzz.yaml",
				   &config, err, sizeof(err))) {
		if (strncmp(err, "fuzz.yaml", 9) || strchr(err, '\n') ||
		    memcmp(&config, &empty, sizeof(config))) {
			fprintf(stderr, "bad refusal: %s\n", err);
			abort();
		}
		return 0;
	}
	round_trip(&config.policy);
	xrl_config_free(&config);
	return 0;
}
