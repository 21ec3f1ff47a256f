// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * Blocklists on real frames over the veth pair: `attach --policy` with a
 * deny list and a monitor list; a listed source gets nothing through, an
 * unlisted one (and a monitored one) all of it, as counted by a socket
 * on the receiving veth; stats and status count the same.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <criterion/criterion.h>
#include <jansson.h>
#include "fixture.h"
#include "topo.h"
#include "wire.h"

#define QUIET_MS 150

static struct topo topo;
static struct wire_rx rx;
static char out[1 << 16], err[4096];
static char drop_path[64], watch_path[64], policy_path[64];

static void setup(void)
{
	char policy[512];

	topo_create(&topo);
	rx.fd = -1;
	snprintf(drop_path, sizeof(drop_path), "/tmp/" TOPO_PREFIX
		 "%d-drop.txt", topo.pid);
	snprintf(watch_path, sizeof(watch_path), "/tmp/" TOPO_PREFIX
		 "%d-watch.txt", topo.pid);
	snprintf(policy_path, sizeof(policy_path), "/tmp/" TOPO_PREFIX
		 "%d-policy.yaml", topo.pid);
	fixture_write_file(drop_path, "198.18.3.0/24\nfd00:3::/64\n");
	fixture_write_file(watch_path, "198.18.5.5\n");
	snprintf(policy, sizeof(policy),
		 "default:\n  action: allow\n"
		 "blocklists:\n"
		 "  - {name: drop, file: %s}\n"
		 "  - {name: watch, file: %s, action: monitor}\n",
		 drop_path, watch_path);
	fixture_write_file(policy_path, policy);
}

static void teardown(void)
{
	wire_rx_close(&rx);
	topo_destroy(&topo);
	unlink(drop_path);
	unlink(watch_path);
	unlink(policy_path);
}

TestSuite(e2e_blocklists, .init = setup, .fini = teardown, .timeout = 120);

static json_t *cli_json(const char *command)
{
	json_t *json;

	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "%s --json", command), 0, "%s: %s", command,
		     err);
	json = json_loads(out, 0, NULL);
	cr_assert_not_null(json, "%s: %s", command, out);
	return json;
}

Test(e2e_blocklists, a_listed_source_gets_nothing_through)
{
	json_t *stats, *status, *lists;

	cr_assert_eq(topo_cli(&topo, out, sizeof(out), err, sizeof(err),
			      "attach %s --policy %s", topo.if_rx,
			      policy_path), 0, "attach: %s", err);
	wire_rx_open(&rx, &topo);
	wire_send(&topo, "198.18.3.9", 200);
	wire_send(&topo, "fd00:3::9", 100);
	wire_send(&topo, "198.18.5.5", 50);
	wire_send(&topo, "198.18.2.1", 300);
	wire_rx_drain(&rx, QUIET_MS);

	cr_assert_eq(wire_rx_count(&rx, "198.18.3.9"), 0);
	cr_assert_eq(wire_rx_count(&rx, "fd00:3::9"), 0);
	cr_assert_eq(wire_rx_count(&rx, "198.18.5.5"), 50);
	cr_assert_eq(wire_rx_count(&rx, "198.18.2.1"), 300);

	stats = cli_json("stats");
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
		json_object_get(stats, "counters"), "blocklisted"),
		"packets")), 300);
	json_decref(stats);
	status = cli_json("status");
	lists = json_object_get(status, "blocklists");
	cr_assert_eq(json_array_size(lists), 2);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
		json_array_get(lists, 0), "hits"), "packets")), 300);
	cr_assert_eq(json_integer_value(json_object_get(json_object_get(
		json_array_get(lists, 1), "hits"), "packets")), 50);
	json_decref(status);
}
