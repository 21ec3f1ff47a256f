/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_text.h - a policy file given as text, loaded as "p.yaml" the
 * way the tools load files, for the loader's tests.
 */
#ifndef XRL_TEST_POLICY_TEXT_H
#define XRL_TEST_POLICY_TEXT_H

#include "policy_read.h"

/* The error line of the last load. */
extern char policy_err[1024];

/* xrl_config_load_string() of @text as "p.yaml"; its return value. */
int policy_load(const char *text, struct xrl_config *config);

/* Asserts that @text loads. */
void policy_loaded(const char *text, struct xrl_config *config);

/* Asserts that @text is refused with exactly the one line @expected,
 * and that nothing is handed back to apply. */
void policy_refused(const char *text, const char *expected);

/* @policy as the YAML writer writes it (free() it). */
char *policy_write(const struct xrl_policy *policy);

#endif
