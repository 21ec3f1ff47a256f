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
#include "policy_file.h"

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

		x.line = y.line = 0;	/* lines belong to each text */
		if (memcmp(&x, &y, sizeof(x)))
			abort();
	}
}

static void round_trip(const struct xrl_policy *policy)
{
	struct xrl_config again;
	char err[1024], *text = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&text, &len);

	if (!out || xrl_policy_write_yaml(out, policy))
		abort();
	fclose(out);
	if (xrl_config_load_string(text, len, "written", &again, err,
				   sizeof(err))) {
		fprintf(stderr, "written policy refused: %s\n%s", err, text);
		abort();
	}
	same_policy_or_abort(policy, &again.policy);
	xrl_config_free(&again);
	free(text);
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
