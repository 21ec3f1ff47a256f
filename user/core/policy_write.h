/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * policy_write.h - a policy written back as a policy file.
 */
#ifndef XRL_POLICY_WRITE_H
#define XRL_POLICY_WRITE_H

#include <stdio.h>
#include "policy.h"

/* Writes @policy back as a policy file (rules in order); loading it gives
 * the same policy, line numbers aside. 0 or -EIO/-ENOMEM. */
int xrl_policy_write_yaml(FILE *out, const struct xrl_policy *policy);

#endif
