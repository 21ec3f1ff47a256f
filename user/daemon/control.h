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

/* A request answered later (a reload, its file read off the loop). */
#define XRL_CONTROL_LATER	1

/*
 * Handles one request line (@len bytes, without its newline) and sets
 * *@response to the response line (without newline; free() it). Requests
 * that name files (reload with a path) are only honoured when
 * @privileged. Returns 0, or -ENOMEM when no response could be built, or
 * XRL_CONTROL_LATER with no response when the request is a reload being
 * read on @state->load: xrl_control_reload_response gives its response
 * once @state->load->done_fd is readable.
 */
int xrl_control_handle(struct xrl_daemon_state *state, bool privileged,
		       const char *line, size_t len, char **response);

/* The response to the reload that returned XRL_CONTROL_LATER, applied or
 * refused now (free() it). 0 or -ENOMEM. */
int xrl_control_reload_response(struct xrl_daemon_state *state,
				char **response);

#endif
