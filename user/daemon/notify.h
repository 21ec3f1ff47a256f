/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * notify.h - what the daemon tells its service manager (sd_notify(3)):
 * READY=1 once it enforces and listens, RELOADING=1 then READY=1 around
 * a SIGHUP reload, a STATUS= line after each change, STOPPING=1. Nothing
 * is sent when no manager asked (NOTIFY_SOCKET unset).
 */
#ifndef XRL_NOTIFY_H
#define XRL_NOTIFY_H

#include <stddef.h>

struct xrl_daemon_state;

/* "5 rules on eth0, eth1; last reload 12:00:03: ok" (or the refusal). */
void xrl_notify_status_line(const struct xrl_daemon_state *state, char *buf,
			    size_t len);

void xrl_notify_ready(const struct xrl_daemon_state *state);
void xrl_notify_reloading(void);
/* STATUS= alone, after a change that was not a SIGHUP. */
void xrl_notify_status(const struct xrl_daemon_state *state);
void xrl_notify_stopping(void);

#endif
