// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit rule add|del|list, reload [FILE], top: requests to
 * xdp-ratelimitd over its control socket (docs/PROTOCOL.md). The daemon
 * owns the policy; these commands only ask it.
 */
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <jansson.h>
#include "client.h"
#include "clock.h"
#include "cmd.h"
#include "report.h"
#include "xrl.h"

enum {
	OPT_JSON = 'j',
	OPT_TOP_N = 'n',
	OPT_FOLLOW = 'f',
	OPT_NAME = XRL_OPT_LONG,
	OPT_ACTION,
	OPT_PPS,
	OPT_BURST,
	OPT_BPS,
	OPT_BURST_BYTES,
	OPT_SCOPE,
	OPT_BAN,
	OPT_BAN_AFTER,
	OPT_BAN_MAX,
	OPT_PROTO,
	OPT_SPORT,
	OPT_DPORT,
	OPT_TCP_FLAGS,
	OPT_REPLACE,
	OPT_GLOBAL,
	OPT_STRATEGY,
	OPT_INTERVAL,
	OPT_LIMIT,
	OPT_WINDOW,
	OPT_FOR,
	OPT_LEVEL,
};

#define JSON_OPT { "json", OPT_JSON, NULL, "the daemon's JSON response" }

static const struct xrl_opt rule_opts[] = {
	{ "name", OPT_NAME, "NAME", "rule name (default: the CIDR)" },
	{ "action", OPT_ACTION, "A", "limit (default), monitor, allow or deny" },
	{ "pps", OPT_PPS, "R", "packets per second (k/M/G suffixes)" },
	{ "burst", OPT_BURST, "B", "burst in packets" },
	{ "bps", OPT_BPS, "R", "bits per second (k/M/G suffixes)" },
	{ "burst-bytes", OPT_BURST_BYTES, "B", "burst in bytes" },
	{ "scope", OPT_SCOPE, "S", "source (a budget per source, default) or "
	  "aggregate (one for all)" },
	{ "proto", OPT_PROTO, "P", "only packets of tcp, udp, icmp or icmpv6 "
	  "(beside the CIDR's plain rule)" },
	{ "sport", OPT_SPORT, "PORT", "only from this port or LOW-HIGH "
	  "(tcp, udp)" },
	{ "dport", OPT_DPORT, "PORT", "only to this port or LOW-HIGH "
	  "(tcp, udp)" },
	{ "tcp-flags", OPT_TCP_FLAGS, "F", "syn: only SYNs without ACK" },
	{ "global", OPT_GLOBAL, NULL, "an aggregate budget shared through "
	  "Redis" },
	{ "ban", OPT_BAN, "D", "ban a source over the limit this long (30s, "
	  "10m, 1h, 7d)" },
	{ "ban-after", OPT_BAN_AFTER, "D", "once it has been over the limit "
	  "this long (default: at its first drop)" },
	{ "ban-max", OPT_BAN_MAX, "D", "a repeat offence doubles the ban up "
	  "to this (default: 8 bans)" },
	{ "replace", OPT_REPLACE, NULL, "change the rule of that CIDR (keeps "
	  "its id)" },
	{ "strategy", OPT_STRATEGY, "S", "token_bucket (default), leaky_bucket "
	  "or sliding_window" },
	{ "interval", OPT_INTERVAL, "D", "leaky_bucket: one packet every D "
	  "(100ms, 500us)" },
	{ "limit", OPT_LIMIT, "N", "sliding_window: at most N packets ..." },
	{ "window", OPT_WINDOW, "D", "... in any window of D (1s, 1m)" },
	{ "level", OPT_LEVEL, "L", "and each subnet of the rule's sources "
	  "together: PREFIX:pps=R,burst=B[,bps=R,burst_bytes=B] "
	  "(24:pps=1k,burst=2k; ipv4/24, ipv6/48 in the default rule); up to "
	  "4 times" },
	JSON_OPT,
	{}
};

static const struct xrl_opt ban_opts[] = {
	{ "for", OPT_FOR, "D", "how long (30s, 10m, 1h, 7d; at most 30d); "
	  "default: until unban" },
	JSON_OPT,
	{}
};

static const struct xrl_opt reload_opts[] = {
	JSON_OPT,
	{}
};

static const struct xrl_opt top_opts[] = {
	{ "count", OPT_TOP_N, "N", "how many (default 10; on a terminal, as "
	  "many as fit)" },
	JSON_OPT,
	{}
};

static const struct xrl_opt events_opts[] = {
	{ "count", OPT_TOP_N, "N", "the last N (default: all kept)" },
	{ "follow", OPT_FOLLOW, NULL, "keep printing new ones" },
	{ "json", OPT_JSON, NULL, "the daemon's JSON response (with --follow: "
	  "one event per line)" },
	{}
};

struct control_args {
	const char *socket;
	bool json;
	bool follow;
	int n_args;		/* positional arguments left */
	char **args;
	json_t *request;	/* fields added by options */
};

/*
 * The daemon's error in the CLI's words: without the protocol command it
 * starts with ("rule.add: "), naming options where it names fields.
 */
static void word_error(const struct control_args *args, const char *err,
		       char *out, size_t len)
{
	static const char *const fields[][2] = {
		{ "\"replace\": true", "--replace" },
		{ "burst_bytes:", "--burst-bytes:" },
		{ "name:", "--name:" }, { "action:", "--action:" },
		{ "pps:", "--pps:" }, { "burst:", "--burst:" },
		{ "bps:", "--bps:" }, { "scope:", "--scope:" },
		{ "global:", "--global:" }, { "n:", "--count:" },
		{ "strategy:", "--strategy:" }, { "interval:", "--interval:" },
		{ "limit:", "--limit:" }, { "window:", "--window:" },
		{ "for:", "--for:" }, { "levels:", "--level:" },
		{ "ban_after:", "--ban-after:" }, { "ban_max:", "--ban-max:" },
		{ "ban:", "--ban:" },
		{ "proto:", "--proto:" }, { "sport:", "--sport:" },
		{ "dport:", "--dport:" }, { "tcp_flags:", "--tcp-flags:" },
	};
	const char *cmd = json_string_value(json_object_get(args->request,
							    "cmd"));
	size_t i, n;
	char *at;

	n = cmd ? strlen(cmd) : 0;
	if (n && !strncmp(err, cmd, n) && !strncmp(err + n, ": ", 2))
		err += n + 2;
	snprintf(out, len, "%s", err);
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		size_t from = strlen(fields[i][0]), to = strlen(fields[i][1]);

		at = strstr(out, fields[i][0]);
		/* A field leads the message, or "replace" is suggested. */
		if (!at || (i && at != out) ||
		    strlen(out) - from + to >= len)
			continue;
		memmove(at + to, at + from, strlen(at + from) + 1);
		memcpy(at, fields[i][1], to);
	}
}

/*
 * Sends @args->request and prints the failure, if any, as one line.
 * Returns the response (json_decref it) or NULL.
 */
static json_t *call_daemon(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			   struct control_args *args)
{
	char err[1024], worded[1100];
	json_t *response;
	int ret;

	ret = xrl_client_call(args->socket, args->request, &response, err,
			      sizeof(err));
	if (ret) {
		word_error(args, err, worded, sizeof(worded));
		xrl_cmd_error(cli, cmd, "%s", worded);
		json_decref(response);
		return NULL;
	}
	return response;
}

static const char *strategy_field(int opt)
{
	switch (opt) {
	case OPT_STRATEGY:
		return "strategy";
	case OPT_INTERVAL:
		return "interval";
	case OPT_LIMIT:
		return "limit";
	default:
		return "window";
	}
}

/* Options of every control command, and the rule fields of "rule add". */
static int parse_args(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv, struct control_args *args)
{
	static const char *const fields[] = {
		[OPT_NAME - OPT_NAME] = "name",
		[OPT_ACTION - OPT_NAME] = "action",
		[OPT_PPS - OPT_NAME] = "pps",
		[OPT_BURST - OPT_NAME] = "burst",
		[OPT_BPS - OPT_NAME] = "bps",
		[OPT_BURST_BYTES - OPT_NAME] = "burst_bytes",
		[OPT_SCOPE - OPT_NAME] = "scope",
		[OPT_BAN - OPT_NAME] = "ban",
		[OPT_BAN_AFTER - OPT_NAME] = "ban_after",
		[OPT_BAN_MAX - OPT_NAME] = "ban_max",
		[OPT_PROTO - OPT_NAME] = "proto",
		[OPT_SPORT - OPT_NAME] = "sport",
		[OPT_DPORT - OPT_NAME] = "dport",
		[OPT_TCP_FLAGS - OPT_NAME] = "tcp_flags",
	};
	int opt, exit_code = -1;
	char *end;
	long n;

	args->request = json_object();
	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1) {
		switch (opt) {
		case OPT_JSON:
			args->json = true;
			break;
		case OPT_FOLLOW:
			args->follow = true;
			break;
		case OPT_REPLACE:
			json_object_set_new(args->request, "replace",
					    json_true());
			break;
		case OPT_GLOBAL:
			json_object_set_new(args->request, "global",
					    json_true());
			break;
		case OPT_STRATEGY:
		case OPT_INTERVAL:
		case OPT_LIMIT:
		case OPT_WINDOW:
			json_object_set_new(args->request,
					    strategy_field(opt),
					    json_string(optarg));
			break;
		case OPT_FOR:
			json_object_set_new(args->request, "for",
					    json_string(optarg));
			break;
		case OPT_LEVEL:
			/* The daemon parses each (xrl_level_parse). */
			if (!json_object_get(args->request, "levels"))
				json_object_set_new(args->request, "levels",
						    json_array());
			json_array_append_new(json_object_get(args->request,
							      "levels"),
					      json_string(optarg));
			break;
		case OPT_TOP_N:
			n = strtol(optarg, &end, 10);
			if (*end || n < 1 || n > 100000) {
				xrl_cmd_error(cli, cmd, "--count %s: not a "
					      "count from 1 to 100000", optarg);
				return EXIT_FAILURE;
			}
			json_object_set_new(args->request, "n",
					    json_integer(n));
			break;
		default:
			if (opt < OPT_NAME || opt > OPT_TCP_FLAGS)
				break;
			/* Quantities go as text: the daemon parses "10k". */
			json_object_set_new(args->request,
					    fields[opt - OPT_NAME],
					    json_string(optarg));
		}
	}
	if (exit_code >= 0)
		return exit_code;
	args->socket = cli->socket;
	args->n_args = argc - optind;
	args->args = argv + optind;
	return -1;
}

static long long int_of(json_t *obj, const char *field)
{
	return json_integer_value(json_object_get(obj, field));
}

static const char *str_of(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(obj, field));
}

static void print_limit(const char *what, json_t *rule, const char *rate,
			const char *burst)
{
	if (json_object_get(rule, rate))
		printf(" %s %lld/s burst %lld", what, int_of(rule, rate),
		       int_of(rule, burst));
}

/* " sliding_window limit 50 window 1s", " leaky_bucket interval 1ms". */
static void print_strategy(json_t *rule)
{
	const char *strategy = str_of(rule, "strategy");

	if (!strategy || !strcmp(strategy, "token_bucket"))
		return;
	printf(" %s", strategy);
	if (str_of(rule, "interval"))
		printf(" interval %s", str_of(rule, "interval"));
	if (json_object_get(rule, "limit"))
		printf(" limit %lld window %s", int_of(rule, "limit"),
		       str_of(rule, "window") ?: "?");
}

static void print_rule(json_t *rule)
{
	json_t *passed = json_object_get(rule, "passed");
	json_t *dropped = json_object_get(rule, "dropped");
	json_t *level;
	size_t i;

	printf("%5lld  %-20s %-22s %-8s %-7s", int_of(rule, "id"),
	       str_of(rule, "name"), str_of(rule, "cidr"),
	       str_of(rule, "action"), str_of(rule, "source") ?: "");
	print_strategy(rule);
	print_limit("pps", rule, "pps", "burst");
	print_limit("bps", rule, "bps", "burst_bytes");
	if (str_of(rule, "match"))
		printf(" %s", str_of(rule, "match"));
	if (str_of(rule, "scope") && strcmp(str_of(rule, "scope"), "source"))
		printf(" %s", str_of(rule, "scope"));
	if (json_is_true(json_object_get(rule, "global")))
		printf(" global%s", json_is_true(json_object_get(rule,
				    "degraded")) ? " (DEGRADED)" : "");
	if (str_of(rule, "ban"))
		printf(" ban %s", str_of(rule, "ban"));
	if (str_of(rule, "ban_after"))
		printf(" after %s", str_of(rule, "ban_after"));
	if (str_of(rule, "ban_max"))
		printf(" max %s", str_of(rule, "ban_max"));
	json_array_foreach(json_object_get(rule, "levels"), i, level)
		printf(" level %s", json_string_value(level));
	if (passed && dropped)
		printf("  (passed %lld, dropped %lld",
		       int_of(passed, "packets"), int_of(dropped, "packets"));
	if (passed && dropped && json_object_get(rule, "banned"))
		printf(", banned %lld", int_of(json_object_get(rule, "banned"),
					       "packets"));
	if (passed && dropped)
		printf(")");
	printf("\n");
}

static int print_response(const struct control_args *args, json_t *response,
			  void (*print_text)(json_t *response))
{
	int ret = 0;

	if (args->json)
		ret = xrl_json_print(stdout, json_incref(response), true);
	else
		print_text(response);
	json_decref(response);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

static void print_added(json_t *response)
{
	printf("added: ");
	print_rule(json_object_get(response, "rule"));
}

static void print_deleted(json_t *response)
{
	printf("deleted: ");
	print_rule(json_object_get(response, "deleted"));
}

static void print_list(json_t *response)
{
	json_t *rule;
	size_t i;

	printf("source keys /%lld (IPv4), /%lld (IPv6); malformed: %s; "
	       "vlan_overflow: %s; ipv4_mapped: %s; unjudged_fragments: %s; "
	       "header_overflow: %s\n",
	       int_of(response, "v4_prefix"), int_of(response, "v6_prefix"),
	       str_of(response, "malformed"), str_of(response, "vlan_overflow"),
	       str_of(response, "ipv4_mapped"),
	       str_of(response, "unjudged_fragments"),
	       str_of(response, "header_overflow"));
	printf("%5s  %-20s %-22s %-8s %-7s limits\n", "id", "name", "cidr",
	       "action", "source");
	json_array_foreach(json_object_get(response, "rules"), i, rule)
		print_rule(rule);
}

static int run_rule(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		    char **argv)
{
	struct control_args args = {};
	void (*print_text)(json_t *response);
	const char *verb;
	json_t *response;
	int ret;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	verb = args.n_args ? args.args[0] : "";
	if (!strcmp(verb, "add") && args.n_args == 2) {
		json_object_set_new(args.request, "cidr",
				    json_string(args.args[1]));
		json_object_set_new(args.request, "cmd",
				    json_string("rule.add"));
		print_text = print_added;
	} else if (!strcmp(verb, "del") && args.n_args == 2 &&
		   json_object_size(args.request) == 0) {
		json_object_set_new(args.request, "rule",
				    json_string(args.args[1]));
		json_object_set_new(args.request, "cmd",
				    json_string("rule.del"));
		print_text = print_deleted;
	} else if (!strcmp(verb, "list") && args.n_args == 1 &&
		   json_object_size(args.request) == 0) {
		json_object_set_new(args.request, "cmd",
				    json_string("rule.list"));
		print_text = print_list;
	} else {
		xrl_cmd_error(cli, cmd, "expected 'add CIDR [OPTIONS]', 'del "
			      "NAME|CIDR' or 'list' (see --help)");
		goto put_request;
	}
	response = call_daemon(cmd, cli, &args);
	if (response)
		ret = print_response(&args, response, print_text);
put_request:
	json_decref(args.request);
	return ret;
}

static void print_reloaded(json_t *response)
{
	printf("reloaded %s: %lld rules\n", str_of(response, "path"),
	       int_of(response, "rules"));
}

static int run_reload(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct control_args args = {};
	char path[PATH_MAX];
	json_t *response;
	int ret;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args > 1 || json_object_size(args.request)) {
		xrl_cmd_error(cli, cmd, "expected at most one FILE");
		goto put_request;
	}
	if (args.n_args == 1) {
		/* The daemon has its own working directory. */
		if (!realpath(args.args[0], path)) {
			xrl_cmd_error(cli, cmd, "%s: %s", args.args[0],
				      strerror(errno));
			goto put_request;
		}
		json_object_set_new(args.request, "path", json_string(path));
	}
	json_object_set_new(args.request, "cmd", json_string("reload"));
	response = call_daemon(cmd, cli, &args);
	if (response)
		ret = print_response(&args, response, print_reloaded);
put_request:
	json_decref(args.request);
	return ret;
}

static void print_uptime(long long s)
{
	if (s >= 86400)
		printf("%lldd ", s / 86400);
	printf("%02lld:%02lld:%02lld", s / 3600 % 24, s / 60 % 60, s % 60);
}

/* The global budgets' link to Redis: healthy, or degraded since when. */
static void print_global(json_t *budgets)
{
	json_t *global = json_object_get(budgets, "global");

	if (!global) {
		printf("budgets:     local only (no Redis)\n");
		return;
	}
	printf("budgets:     through redis %s as node \"%s\": ",
	       str_of(global, "redis"), str_of(global, "node"));
	if (json_is_true(json_object_get(global, "degraded")))
		printf("DEGRADED since %s (%s)\n",
		       str_of(global, "degraded_since"),
		       str_of(global, "degraded_reason"));
	else
		printf("healthy\n");
}

static void print_daemon(json_t *response)
{
	json_t *daemon = json_object_get(response, "daemon");
	json_t *ifaces = json_object_get(daemon, "interfaces");
	json_t *last = json_object_get(daemon, "last_reload"), *iface;
	size_t i;

	printf("xdp-ratelimitd %s, pid %lld, up ", str_of(daemon, "version"),
	       int_of(daemon, "pid"));
	print_uptime(int_of(daemon, "uptime_s"));
	printf("\nconfig:      %s\n", str_of(daemon, "config"));
	printf("socket:      %s (%lld client%s)\n", str_of(daemon, "socket"),
	       int_of(daemon, "clients"),
	       int_of(daemon, "clients") == 1 ? "" : "s");
	printf("interfaces: ");
	json_array_foreach(ifaces, i, iface)
		printf(" %s", json_string_value(iface));
	printf("%s\n", json_array_size(ifaces) ? "" : " none");
	printf("policies:    %lld applied, %lld refused since the start\n",
	       int_of(daemon, "policies_applied"),
	       int_of(daemon, "changes_refused"));
	if (!json_is_object(last))
		printf("last reload: none since the start\n");
	else if (json_is_true(json_object_get(last, "ok")))
		printf("last reload: %s: ok\n", str_of(last, "at"));
	else
		printf("last reload: %s: refused: %s\n", str_of(last, "at"),
		       str_of(last, "error"));
	print_global(json_object_get(response, "budgets"));
}

static int run_daemon(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct control_args args = {};
	json_t *response;
	int ret;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args || json_object_size(args.request)) {
		xrl_cmd_error(cli, cmd, "takes no arguments");
		goto put_request;
	}
	json_object_set_new(args.request, "cmd", json_string("status"));
	response = call_daemon(cmd, cli, &args);
	if (!response)
		goto put_request;
	if (args.json) {
		/* The daemon's own view only: the data path is status'. */
		json_t *view = json_pack("{s:O, s:O?}", "daemon",
					 json_object_get(response, "daemon"),
					 "budgets",
					 json_object_get(response, "budgets"));

		ret = xrl_json_print(stdout, view, true) ? EXIT_FAILURE :
		      EXIT_SUCCESS;
	} else {
		print_daemon(response);
		ret = EXIT_SUCCESS;
	}
	json_decref(response);
put_request:
	json_decref(args.request);
	return ret;
}

static void print_top(json_t *response)
{
	json_t *entry;
	size_t i;

	printf("%-28s %-20s %12s %12s\n", "source", "rule", "dropped",
	       "passed");
	json_array_foreach(json_object_get(response, "top"), i, entry) {
		printf("%-28s %-20s %12lld %12lld", str_of(entry, "source"),
		       str_of(entry, "rule") ? str_of(entry, "rule") : "?",
		       int_of(entry, "dropped"), int_of(entry, "passed"));
		if (json_is_true(json_object_get(entry, "banned")))
			printf("  banned %.0fs more", json_real_value(
				json_object_get(entry, "ban_left_s")));
		printf("\n");
	}
}

/* ---- top, live ------------------------------------------------------ */

#define TOP_LIVE_SOURCES	1000	/* asked for, to rank by rate */
#define TOP_LIVE_INTERVAL_MS	1000

struct top_row {
	json_t *entry;
	double drop_rate, pass_rate;
};

static json_int_t entry_int(json_t *entry, const char *field)
{
	return json_integer_value(json_object_get(entry, field));
}

/* The same source (and rule) in the previous sample, or NULL. */
static json_t *previous_entry(json_t *previous, json_t *entry)
{
	const char *source = json_string_value(json_object_get(entry,
								"source"));
	json_t *old;
	size_t i;

	json_array_foreach(json_object_get(previous, "top"), i, old)
		if (!strcmp(json_string_value(json_object_get(old, "source")),
			    source) &&
		    entry_int(old, "rule_id") == entry_int(entry, "rule_id"))
			return old;
	return NULL;
}

static int by_drop_rate(const void *a, const void *b)
{
	const struct top_row *ra = a, *rb = b;

	if (ra->drop_rate != rb->drop_rate)
		return ra->drop_rate < rb->drop_rate ? 1 : -1;
	return (entry_int(rb->entry, "dropped") >
		entry_int(ra->entry, "dropped")) -
	       (entry_int(rb->entry, "dropped") <
		entry_int(ra->entry, "dropped"));
}

/* Rows the terminal has for sources, under the two header lines. */
static size_t screen_rows(void)
{
	struct winsize ws;

	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) || ws.ws_row < 6)
		return 20;
	return ws.ws_row - 4;
}

static void print_top_screen(json_t *response, json_t *previous,
			     double seconds, size_t shown)
{
	json_t *entries = json_object_get(response, "top"), *entry, *old;
	size_t i, n = json_array_size(entries);
	struct top_row *rows = calloc(n ? n : 1, sizeof(*rows));
	char stamp[16], fill[16];
	time_t now = time(NULL);
	struct tm tm;

	if (!rows)
		return;
	json_array_foreach(entries, i, entry) {
		rows[i].entry = entry;
		old = previous ? previous_entry(previous, entry) : NULL;
		if (old && seconds > 0) {
			rows[i].drop_rate = (entry_int(entry, "dropped") -
					     entry_int(old, "dropped")) /
					    seconds;
			rows[i].pass_rate = (entry_int(entry, "passed") -
					     entry_int(old, "passed")) /
					    seconds;
		}
	}
	qsort(rows, n, sizeof(*rows), by_drop_rate);
	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	/* Home and clear, as top(1) redraws. */
	printf("\033[H\033[2Jxdp-ratelimit top - %s  sources dropping: %zu  "
	       "(sorted by drops/s; q: Ctrl-C)\n\n", stamp, n);
	printf("%-24s %-16s %10s %10s %12s %12s %5s\n", "SOURCE", "RULE",
	       "DROP/S", "PASS/S", "DROPPED", "PASSED", "FILL");
	for (i = 0; i < n && i < shown; i++) {
		entry = rows[i].entry;
		if (json_is_number(json_object_get(entry, "fill")))
			snprintf(fill, sizeof(fill), "%3.0f%%", 100 *
				 json_number_value(json_object_get(entry,
								   "fill")));
		else
			snprintf(fill, sizeof(fill), "-");
		printf("%-24s %-16.16s %10.0f %10.0f %12lld %12lld %5s\n",
		       json_string_value(json_object_get(entry, "source")),
		       json_string_value(json_object_get(entry, "rule")) ?: "?",
		       rows[i].drop_rate, rows[i].pass_rate,
		       (long long)entry_int(entry, "dropped"),
		       (long long)entry_int(entry, "passed"), fill);
	}
	fflush(stdout);
	free(rows);
}

static double monotonic_s(void)
{
	return xrl_clock_ns(CLOCK_MONOTONIC) / 1e9;
}

/* Redraws every second until interrupted (or the daemon goes away). */
static int run_top_live(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			struct control_args *args)
{
	json_t *n_item = json_object_get(args->request, "n");
	size_t shown = n_item ? (size_t)json_integer_value(n_item) : 0;
	json_t *response, *previous = NULL;
	double at, previous_at = 0;

	json_object_set_new(args->request, "n",
			    json_integer(TOP_LIVE_SOURCES));
	for (;;) {
		response = call_daemon(cmd, cli, args);
		if (!response)
			break;
		at = monotonic_s();
		print_top_screen(response, previous, at - previous_at,
				 shown ? shown : screen_rows());
		json_decref(previous);
		previous = response;
		previous_at = at;
		poll(NULL, 0, TOP_LIVE_INTERVAL_MS);
	}
	json_decref(previous);
	return EXIT_FAILURE;
}

static int run_top(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		   char **argv)
{
	struct control_args args = {};
	json_t *response;
	int ret;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args || json_object_size(args.request) >
			   (size_t)!!json_object_get(args.request, "n")) {
		xrl_cmd_error(cli, cmd, "expected only -n N and --json");
		goto put_request;
	}
	json_object_set_new(args.request, "cmd", json_string("top"));
	if (!args.json && isatty(STDOUT_FILENO)) {
		ret = run_top_live(cmd, cli, &args);
		goto put_request;
	}
	response = call_daemon(cmd, cli, &args);
	if (response)
		ret = print_response(&args, response, print_top);
put_request:
	json_decref(args.request);
	return ret;
}

static void print_events(json_t *response)
{
	char stamp[32];
	json_t *event;
	struct tm tm;
	time_t when;
	size_t i;

	json_array_foreach(json_object_get(response, "events"), i, event) {
		when = (time_t)json_number_value(json_object_get(event,
								 "time"));
		localtime_r(&when, &tm);
		strftime(stamp, sizeof(stamp), "%Y-%m-%d %H:%M:%S", &tm);
		printf("%s  %s\n", stamp, json_string_value(
				json_object_get(event, "message")));
	}
}

/* With --follow --json: one compact object per event and line. */
static void print_events_json(json_t *response)
{
	json_t *event;
	size_t i;

	json_array_foreach(json_object_get(response, "events"), i, event)
		xrl_json_print(stdout, json_incref(event), false);
}

#define FOLLOW_INTERVAL_MS	1000

static int run_events(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv)
{
	struct control_args args = {};
	json_t *response;
	int ret;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args || json_object_size(args.request) >
			   (size_t)!!json_object_get(args.request, "n")) {
		xrl_cmd_error(cli, cmd, "expected only -n N, --follow and "
			      "--json");
		goto put_request;
	}
	json_object_set_new(args.request, "cmd", json_string("events"));
	if (!args.follow) {
		response = call_daemon(cmd, cli, &args);
		if (response)
			ret = print_response(&args, response, print_events);
		goto put_request;
	}
	/* Asks for what came after the last event seen, until stopped. */
	for (;;) {
		response = call_daemon(cmd, cli, &args);
		if (!response)
			break;
		if (args.json)
			print_events_json(response);
		else
			print_events(response);
		fflush(stdout);
		json_object_del(args.request, "n");
		json_object_set(args.request, "since",
				json_object_get(response, "last_seq"));
		json_decref(response);
		poll(NULL, 0, FOLLOW_INTERVAL_MS);
	}
put_request:
	json_decref(args.request);
	return ret;
}

/* ---- ban, unban, bans ---------------------------------------------- */

static void print_ban(json_t *ban, uint64_t now_ms)
{
	json_t *until = json_object_get(ban, "until_ms");
	long long left;

	printf("%-28s", str_of(ban, "cidr"));
	if (until) {
		left = (json_integer_value(until) - (long long)now_ms + 999) /
		       1000;
		printf(" %lld s left", left > 0 ? left : 0);
	} else {
		printf(" until unban");
	}
	if (json_object_get(ban, "packets"))
		printf(" (dropped %lld)", int_of(ban, "packets"));
	printf("\n");
}

static uint64_t now_wall_ms(void)
{
	return xrl_clock_ns(CLOCK_REALTIME) / XRL_NS_PER_MS;
}

static void print_banned(json_t *response)
{
	printf("banned: ");
	print_ban(json_object_get(response, "ban"), now_wall_ms());
}

static void print_unbanned(json_t *response)
{
	(void)response;
	printf("unbanned\n");
}

static void print_bans(json_t *response)
{
	uint64_t now = json_integer_value(json_object_get(response, "now_ms"));
	json_t *ban;
	size_t i;

	json_array_foreach(json_object_get(response, "bans"), i, ban)
		print_ban(ban, now);
}

/* ban ADDR[/LEN] [--for D], unban ADDR[/LEN], bans: one request each. */
static int run_ban_cmd(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		       int argc, char **argv, const char *verb,
		       void (*print_text)(json_t *response))
{
	bool bans = !strcmp(verb, "bans");
	struct control_args args = {};
	json_t *response;
	int ret;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		goto put_request;
	ret = EXIT_FAILURE;
	if (args.n_args != (bans ? 0 : 1)) {
		xrl_cmd_error(cli, cmd, bans ? "expected no argument" :
			      "expected one ADDR[/LEN]");
		goto put_request;
	}
	if (!bans)
		json_object_set_new(args.request, "cidr",
				    json_string(args.args[0]));
	json_object_set_new(args.request, "cmd", json_string(verb));
	response = call_daemon(cmd, cli, &args);
	if (response)
		ret = print_response(&args, response, print_text);
put_request:
	json_decref(args.request);
	return ret;
}

static int run_ban(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		   char **argv)
{
	return run_ban_cmd(cmd, cli, argc, argv, "ban", print_banned);
}

static int run_unban(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		     int argc, char **argv)
{
	return run_ban_cmd(cmd, cli, argc, argv, "unban", print_unbanned);
}

static int run_bans(const struct xrl_cmd *cmd, struct xrl_cli *cli, int argc,
		    char **argv)
{
	return run_ban_cmd(cmd, cli, argc, argv, "bans", print_bans);
}

const struct xrl_cmd xrl_cmd_ban = {
	.name = "ban",
	.synopsis = "ADDR[/LEN] [--for D] [--json]",
	.summary = "Drop every packet of a prefix, before any rule, for D or "
		   "until unban (through the daemon, kept across restarts).",
	.opts = ban_opts,
	.run = run_ban,
};

const struct xrl_cmd xrl_cmd_unban = {
	.name = "unban",
	.synopsis = "ADDR[/LEN] [--json]",
	.summary = "Lift a ban.",
	.opts = reload_opts,
	.run = run_unban,
};

const struct xrl_cmd xrl_cmd_bans = {
	.name = "bans",
	.synopsis = "[--json]",
	.summary = "The bans in force, with what each dropped.",
	.opts = reload_opts,
	.run = run_bans,
};

const struct xrl_cmd xrl_cmd_rule = {
	.name = "rule",
	.synopsis = "add CIDR [OPTIONS] | del NAME|CIDR | list [--json]",
	.summary = "Change or list the daemon's rules (through its socket).",
	.opts = rule_opts,
	.run = run_rule,
};

const struct xrl_cmd xrl_cmd_reload = {
	.name = "reload",
	.synopsis = "[FILE] [--json]",
	.summary = "Have the daemon apply its policy file (or FILE) whole.",
	.opts = reload_opts,
	.run = run_reload,
};

const struct xrl_cmd xrl_cmd_top = {
	.name = "top",
	.synopsis = "[-n N] [--json]",
	.summary = "Sources with the most dropped packets (from the daemon); "
		   "on a terminal, refreshed every second by drop rate.",
	.opts = top_opts,
	.run = run_top,
};

const struct xrl_cmd xrl_cmd_daemon = {
	.name = "daemon",
	.synopsis = "[--json]",
	.summary = "The daemon's own view: uptime, last reload and its "
		   "result, clients, budgets.",
	.opts = reload_opts,
	.run = run_daemon,
};

const struct xrl_cmd xrl_cmd_events = {
	.name = "events",
	.synopsis = "[-n N] [--follow] [--json]",
	.summary = "Sources that started being limited (from the daemon).",
	.opts = events_opts,
	.run = run_events,
};
