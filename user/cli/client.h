/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * client.h - one request to the daemon's control socket and its answer.
 */
#ifndef XRL_CLIENT_H
#define XRL_CLIENT_H

#include <stddef.h>
#include <jansson.h>

#define XRL_CLIENT_TIMEOUT_MS 120000	/* a 100k-rule reload fits */

/*
 * Sends @request (one JSON object, without newline) to the daemon at
 * @socket_path and reads its one-line response into *@response (free()
 * it). On failure returns -errno with one line in @err; when no daemon
 * listens it says so and names the socket path.
 */
int xrl_client_request(const char *socket_path, const char *request,
		       char **response, char *err, size_t len);

/*
 * The same with JSON values: *@response is the parsed response object
 * (json_decref it). A response with "ok": false returns -EPROTO with its
 * "error" in @err (and still sets *@response).
 */
int xrl_client_call(const char *socket_path, json_t *request,
		    json_t **response, char *err, size_t len);

#endif
