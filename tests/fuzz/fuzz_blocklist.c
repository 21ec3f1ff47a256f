// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * libFuzzer target for blocklist files (user/core/blocklist.c): a
 * stranger's text. Besides what the sanitizers catch, it checks that a
 * file read is its prefixes sorted and each once, no more than the cap
 * (small here, so the fuzzer reaches it) nor than the lines counted, each
 * a key cidr.c would make again from its own text; and that a refusal is
 * one line naming the file and nothing is kept.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "blocklist.h"
#include "cidr.h"

#define FUZZ_CAP	64

static void check_read(const struct xrl_blocklist_entries *e)
{
	struct xrl_lpm_key again;
	char text[64];
	size_t i;

	if (e->n > e->lines || e->lines > FUZZ_CAP)
		abort();
	for (i = 0; i < e->n; i++) {
		if (i && memcmp(&e->keys[i - 1], &e->keys[i], sizeof(again)) ==
			 0)
			abort();
		xrl_cidr_format(&e->keys[i], text, sizeof(text));
		if (xrl_cidr_parse(text, &again) ||
		    memcmp(&again, &e->keys[i], sizeof(again)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct xrl_blocklist_entries e;
	char err[512] = "";
	FILE *in;
	int ret;

	in = fmemopen((void *)data, size, "r");
	if (!in)
		return 0;
	ret = xrl_blocklist_read(in, "f.txt", FUZZ_CAP, &e, err, sizeof(err));
	fclose(in);
	if (!ret) {
		check_read(&e);
		xrl_blocklist_entries_free(&e);
		return 0;
	}
	if (e.keys || strncmp(err, "f.txt:", 6) || strchr(err, '\n'))
		abort();
	return 0;
}
