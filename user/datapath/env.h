/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * env.h - what the host must offer before anything is loaded: privileges,
 * kernel BTF.
 */
#ifndef XRL_ENV_H
#define XRL_ENV_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Checks the effective capabilities: BPF work needs CAP_BPF (or
 * CAP_SYS_ADMIN) and CAP_SYS_ADMIN (the maps in force are opened by id),
 * and with @net_admin also CAP_NET_ADMIN (attaching). -EPERM with @err
 * naming what is missing.
 */
int xrl_check_privileges(bool net_admin, char *err, size_t len);

/* -ENOTSUP with @err when the kernel exposes no BTF. */
int xrl_check_btf(char *err, size_t len);

#endif
