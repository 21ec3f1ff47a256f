/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * control.h - the daemon's control protocol: one JSON object per line
 * in, one per line out (docs/PROTOCOL.md). What a request changes goes
 * through the change engine (change.h).
 */
#ifndef XRL_CONTROL_H
#define XRL_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include "change.h"

#define XRL_PROTOCOL_VERSION	1

#define XRL_CONTROL_LINE_MAX	65536	/* longest request, bytes */

/*
 * Handles one request line (@len bytes, without its newline) and sets
 * *@response to the response line (without newline; free() it). Requests
 * that name files (reload with a path) are only honoured when
 * @privileged. Returns 0, or -ENOMEM when no response could be built.
 */
int xrl_control_handle(struct xrl_daemon_state *state, bool privileged,
		       const char *line, size_t len, char **response);

#endif
