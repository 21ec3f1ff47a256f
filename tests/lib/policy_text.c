// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <criterion/criterion.h>
#include "policy_text.h"
#include "policy_write.h"

char policy_err[1024];

int policy_load(const char *text, struct xrl_config *config)
{
	return xrl_config_load_string(text, strlen(text), "p.yaml", config,
				      policy_err, sizeof(policy_err));
}

void policy_loaded(const char *text, struct xrl_config *config)
{
	int ret = policy_load(text, config);

	cr_assert_eq(ret, 0, "refused (%d): %s", ret, policy_err);
}

void policy_refused(const char *text, const char *expected)
{
	struct xrl_config config, zero = { 0 };
	int ret;

	memset(&config, 0xa5, sizeof(config));
	ret = policy_load(text, &config);
	cr_assert_eq(ret, -EINVAL, "loaded (%d): %s", ret, text);
	cr_assert_str_eq(policy_err, expected);
	cr_assert(!memcmp(&config, &zero, sizeof(config)),
		  "config not emptied on error");
	cr_assert_null(strchr(policy_err, '\n'), "error spans lines");
}

char *policy_write(const struct xrl_policy *policy)
{
	char *text = NULL;
	size_t size = 0;
	FILE *out = open_memstream(&text, &size);

	cr_assert_not_null(out);
	cr_assert_eq(xrl_policy_write_yaml(out, policy), 0);
	fclose(out);
	return text;
}
