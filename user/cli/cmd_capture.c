// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * xdp-ratelimit capture: sampled copies of judged frames, with the rule
 * and the verdict that judged them, into a pcapng file.
 *
 * Read straight from the pins, as status and stats are, not through the
 * daemon as events is: the frames are a stream (up to
 * XRL_CAPTURE_PER_SECOND of them) the daemon's one event loop would
 * have to carry to a client it must never wait for, and a capture
 * works where no daemon runs (a program put in place by attach). The
 * capture's ring is its own, so the daemon's reading of the events ring
 * is untouched. The daemon is only asked, when it runs, for the rules'
 * names.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/bpf.h>
#include <jansson.h>
#include "capture.h"
#include "event_reader.h"
#include "cidr.h"
#include "client.h"
#include "clock.h"
#include "cmd.h"
#include "counters.h"
#include "datapath.h"
#include "loader.h"
#include "pcapng.h"
#include "rule_spec.h"
#include "rulemaps.h"
#include "stats.h"

enum {
	OPT_RULE = XRL_OPT_LONG,
	OPT_VERDICT,
	OPT_FORCE,
};

static const struct xrl_opt capture_opts[] = {
	XRL_OPT("rule", OPT_RULE, "NAME",
		"only the frames this rule judged (its name, CIDR or id)"),
	XRL_OPT("verdict", OPT_VERDICT, "V",
		"only these: drop (every frame dropped), limited (over a "
		"limit or monitor rule's limits), banned, denied, blocklisted "
		"or passed (every frame passed); default: every frame"),
	XRL_OPT("snaplen", 's', "N",
		"bytes of each frame kept, 1 to 256 (default 256)"),
	XRL_OPT("count", 'c', "N", "stop after N frames"),
	XRL_OPT("write", 'w', "FILE",
		"the pcapng file to write (- for standard output)"),
	XRL_OPT("force", OPT_FORCE, NULL, "overwrite FILE if it exists"),
	{}
};

/* The words of --verdict: which verdicts and XDP actions each takes. */
struct verdict_word {
	const char *word;
	__u32 verdicts;
	__u32 actions;
};

#define ALL_VERDICTS	((1U << XRL_VERDICT_COUNT) - 1)
#define ALL_ACTIONS	((1U << XDP_DROP) | (1U << XDP_PASS))

static const struct verdict_word verdict_words[] = {
	{ "drop", ALL_VERDICTS, 1U << XDP_DROP },
	{ "limited", 1U << XRL_VERDICT_DROP | 1U << XRL_VERDICT_MONITOR,
	  ALL_ACTIONS },
	{ "banned", 1U << XRL_VERDICT_BANNED, ALL_ACTIONS },
	{ "denied", 1U << XRL_VERDICT_DENY, ALL_ACTIONS },
	{ "blocklisted", 1U << XRL_VERDICT_BLOCKLISTED, ALL_ACTIONS },
	{ "passed", ALL_VERDICTS, 1U << XDP_PASS },
	{}
};

/* The word a frame's comment gives its verdict (of --verdict's words). */
static const char *verdict_word_of(__u8 verdict, __u8 action)
{
	if (verdict == XRL_VERDICT_DROP || verdict == XRL_VERDICT_MONITOR)
		return "limited";
	if (verdict == XRL_VERDICT_BANNED)
		return "banned";
	if (verdict == XRL_VERDICT_DENY)
		return "denied";
	if (verdict == XRL_VERDICT_BLOCKLISTED)
		return "blocklisted";
	return action == XDP_DROP ? "drop" : "passed";
}

struct capture_args {
	const char *rule;	/* --rule, or NULL */
	const struct verdict_word *verdict;
	long snaplen;
	long count;		/* 0: no end */
	const char *path;
	bool force;
};

static int parse_number(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			const char *name, const char *text, long min,
			long max, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(text, &end, 10);
	if (!*text || *end || errno || *out < min || *out > max) {
		xrl_cmd_error(cli, cmd, "--%s %s: not a number from %ld to "
			      "%ld", name, text, min, max);
		return -EINVAL;
	}
	return 0;
}

static int parse_verdict(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			 const char *text, struct capture_args *args)
{
	const struct verdict_word *w;

	for (w = verdict_words; w->word; w++) {
		if (!strcmp(w->word, text)) {
			args->verdict = w;
			return 0;
		}
	}
	xrl_cmd_error(cli, cmd, "--verdict %s: not one of drop, limited, "
		      "banned, denied, blocklisted, passed", text);
	return -EINVAL;
}

/* One option of capture's; 0, or -EINVAL with the refusal printed. */
static int parse_opt(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		     int opt, struct capture_args *args)
{
	switch (opt) {
	case OPT_RULE:
		args->rule = optarg;
		return 0;
	case OPT_VERDICT:
		return parse_verdict(cmd, cli, optarg, args);
	case 's':
		return parse_number(cmd, cli, "snaplen", optarg, 1,
				    XRL_CAPTURE_SNAP_MAX, &args->snaplen);
	case 'c':
		return parse_number(cmd, cli, "count", optarg, 1, LONG_MAX,
				    &args->count);
	case 'w':
		args->path = optarg;
		return 0;
	case OPT_FORCE:
		args->force = true;
		return 0;
	}
	return 0;
}

/* -1 to go on, or an exit code. */
static int parse_args(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		      int argc, char **argv, struct capture_args *args)
{
	int opt, exit_code = -1;

	args->snaplen = XRL_CAPTURE_SNAP_MAX;
	args->verdict = NULL;
	while ((opt = xrl_cmd_next_opt(cmd, cli, argc, argv,
				       &exit_code)) != -1) {
		if (parse_opt(cmd, cli, opt, args))
			return EXIT_FAILURE;
	}
	if (exit_code >= 0)
		return exit_code;
	if (optind != argc) {
		xrl_cmd_error(cli, cmd, "unexpected argument '%s'",
			      argv[optind]);
		return EXIT_FAILURE;
	}
	if (!args->path) {
		xrl_cmd_error(cli, cmd, "-w FILE is required (- for standard "
			      "output)");
		return EXIT_FAILURE;
	}
	return -1;
}

/* ---- the rules' names ------------------------------------------------ */

struct rule_name {
	__u32 id;
	char name[XRL_RULE_NAME_MAX];
	char cidr[64];	/* "fd00:.../128" at most */
};

struct rule_names {
	struct rule_name *rules;
	size_t n;
};

static struct rule_name *rule_names_add(struct rule_names *names)
{
	struct rule_name *grown;

	grown = realloc(names->rules, (names->n + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	names->rules = grown;
	memset(&grown[names->n], 0, sizeof(*grown));
	return &grown[names->n++];
}

/* A rule of the pins: named by its CIDR (the name a rule has by default),
 * the default rule "default". */
static int add_pinned_rule(const struct xrl_lpm_key *prefix,
			   const struct xrl_rule *rule, void *ctx)
{
	struct rule_name *r = rule_names_add(ctx);

	if (!r)
		return -ENOMEM;
	r->id = rule->id;
	xrl_cidr_format(prefix, r->cidr, sizeof(r->cidr));
	snprintf(r->name, sizeof(r->name), "%s",
		 rule->id ? r->cidr : "default");
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct rule_name *ra = a, *rb = b;

	return ra->id < rb->id ? -1 : ra->id > rb->id;
}

static struct rule_name *rule_by_id(const struct rule_names *names, __u32 id)
{
	struct rule_name key = { .id = id };

	return names->n ? bsearch(&key, names->rules, names->n,
				  sizeof(key), by_id) : NULL;
}

/*
 * The daemon's names, when one answers, for the rules of the pins it
 * holds too (the same id of the same CIDR: a daemon of another pin
 * directory names none of them).
 */
static void daemon_rule_names(const struct xrl_cli *cli,
			      struct rule_names *names)
{
	json_t *request, *response = NULL, *rule;
	struct rule_name *r;
	const char *name, *cidr;
	char err[256];
	size_t i;
	int ret;

	request = json_pack("{s:s}", "cmd", "rule.list");
	if (!request)
		return;
	ret = xrl_client_call(cli->socket, request, &response, err,
			      sizeof(err));
	json_decref(request);
	json_array_foreach(ret ? NULL : json_object_get(response, "rules"), i,
			   rule) {
		r = rule_by_id(names, (__u32)json_integer_value(
				       json_object_get(rule, "id")));
		name = json_string_value(json_object_get(rule, "name"));
		cidr = json_string_value(json_object_get(rule, "cidr"));
		if (r && name && cidr && !strcmp(cidr, r->cidr))
			snprintf(r->name, sizeof(r->name), "%s", name);
	}
	json_decref(response);
}

/* The rules in force, by id, with their names: the daemon's, else their
 * CIDRs (the name a rule has by default). */
static int rule_names_read(const struct xrl_cli *cli,
			   const struct xrl_datapath *dp,
			   struct rule_names *names)
{
	int ret = xrl_rules_walk(dp, add_pinned_rule, names);

	if (ret || !names->n)
		return ret;
	qsort(names->rules, names->n, sizeof(*names->rules), by_id);
	daemon_rule_names(cli, names);
	return 0;
}

/* The rule --rule names: by name, CIDR or id; NULL when none. */
static const struct rule_name *rule_named(const struct rule_names *names,
					  const char *text)
{
	char *end;
	size_t i;
	unsigned long id;

	for (i = 0; i < names->n; i++)
		if (!strcmp(names->rules[i].name, text) ||
		    !strcmp(names->rules[i].cidr, text))
			return &names->rules[i];
	id = strtoul(text, &end, 10);
	if (*text >= '0' && *text <= '9' && !*end && id <= UINT32_MAX)
		return rule_by_id(names, (__u32)id);
	return NULL;
}

/* ---- the capture ----------------------------------------------------- */

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* SIGINT, SIGTERM and SIGHUP end the capture: not restarting the wait. */
static void catch_stops(void)
{
	struct sigaction sa = { .sa_handler = on_stop };
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP };
	size_t i;

	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
}

struct capture_run {
	const struct capture_args *args;
	const struct rule_names *names;
	FILE *out;
	__u64 clock_to_unix_ns;	/* added to the program's clock */
	long written;
	int write_error;	/* -errno of the file, once */
};

static void frame_comment(const struct capture_run *run,
			  const struct xrl_capture_record *rec, char *buf,
			  size_t len)
{
	const struct rule_name *r = rec->rule ?
				    rule_by_id(run->names, rec->rule - 1) :
				    NULL;
	const char *word = verdict_word_of(rec->verdict, rec->action);
	const char *action = rec->action == XDP_DROP ? "drop" : "pass";

	if (rec->rule)
		snprintf(buf, len, "rule=%s id=%u verdict=%s counter=%s xdp=%s",
			 r ? r->name : "?", rec->rule - 1, word,
			 xrl_verdict_name(rec->verdict), action);
	else
		snprintf(buf, len, "rule=- verdict=%s counter=%s xdp=%s", word,
			 xrl_verdict_name(rec->verdict), action);
}

/* A record into the file; non-zero stops the ring's reading. */
static int write_record(const void *record, void *ctx)
{
	const struct xrl_capture_record *rec = record;
	struct capture_run *run = ctx;
	char comment[XRL_RULE_NAME_MAX + 96];
	__u32 cap_len = rec->cap_len;

	if (run->write_error ||
	    (run->args->count && run->written >= run->args->count))
		return 1;
	if (cap_len > XRL_CAPTURE_SNAP_MAX)
		cap_len = XRL_CAPTURE_SNAP_MAX;
	frame_comment(run, rec, comment, sizeof(comment));
	run->write_error = xrl_pcapng_frame(run->out,
					    rec->time_ns +
					    run->clock_to_unix_ns, rec->data,
					    cap_len, rec->frame_len, comment);
	if (run->write_error)
		return 1;
	run->written++;
	return run->args->count && run->written >= run->args->count;
}

static bool run_done(const struct capture_run *run)
{
	return stop_signal || run->write_error ||
	       (run->args->count && run->written >= run->args->count);
}

#define RENEW_EVERY_NS	(1000ULL * 1000000ULL)
#define POLL_MS		200

/* Reads the ring until stopped; 0, or -errno (-EBUSY: taken over). */
static int capture_loop(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			const struct xrl_datapath *dp,
			struct xrl_ring_reader *reader,
			struct capture_run *run)
{
	__u64 renewed = xrl_capture_clock_ns(), now;
	pid_t owner = 0;
	int ret;

	while (!run_done(run)) {
		ret = xrl_ring_reader_poll(reader, POLL_MS);
		if (ret < 0 && ret != -EINTR)
			return ret;
		now = xrl_capture_clock_ns();
		if (run_done(run) || now - renewed < RENEW_EVERY_NS)
			continue;
		ret = xrl_capture_renew(dp, &owner);
		if (ret == -EBUSY && owner)
			xrl_cmd_error(cli, cmd, "another capture (pid %d) took "
				      "over", (int)owner);
		else if (ret == -EBUSY)
			xrl_cmd_error(cli, cmd, "the program ended the capture "
				      "(its lease ran out)");
		if (ret)
			return ret;
		renewed = now;
	}
	return 0;
}

/* The capture's end, as tcpdump tells its own. */
static void print_counts(const struct capture_run *run,
			 const struct xrl_datapath *dp)
{
	struct xrl_capture_state st;

	if (xrl_capture_stats_read(dp, &st))
		memset(&st, 0, sizeof(st));
	fprintf(stderr, "%ld frames captured\n", run->written);
	fprintf(stderr, "%llu sampled out (over %d frames/s)\n",
		(unsigned long long)st.budget.count[XRL_CAPTURE_SAMPLED_OUT],
		XRL_CAPTURE_PER_SECOND);
	fprintf(stderr, "%llu lost (ring full)\n",
		(unsigned long long)st.budget.count[XRL_CAPTURE_LOST]);
}

/* The file -w names, refused when it exists unless --force. */
static FILE *open_output(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			 const struct capture_args *args)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC;
	FILE *out;
	int fd;

	if (!strcmp(args->path, "-"))
		return stdout;
	flags |= args->force ? O_TRUNC : O_EXCL;
	/* Frames are the traffic of others: readable by the owner only. */
	fd = open(args->path, flags, 0600);
	if (fd < 0 && errno == EEXIST)
		xrl_cmd_error(cli, cmd, "%s exists (--force to overwrite it)",
			      args->path);
	else if (fd < 0)
		xrl_cmd_error(cli, cmd, "%s: %s", args->path, strerror(errno));
	if (fd < 0)
		return NULL;
	out = fdopen(fd, "w");
	if (!out)
		close(fd);
	return out;
}

/* The filter and snaplen asked for, in the config's terms. */
static int capture_config(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
			  const struct capture_args *args,
			  const struct rule_names *names,
			  struct xrl_capture_config *cfg)
{
	const struct rule_name *rule = NULL;

	memset(cfg, 0, sizeof(*cfg));
	if (args->rule) {
		rule = rule_named(names, args->rule);
		if (!rule) {
			xrl_cmd_error(cli, cmd, "--rule %s: no rule of that "
				      "name, CIDR or id in force", args->rule);
			return -ENOENT;
		}
		cfg->rule = rule->id + 1;
	}
	cfg->verdicts = args->verdict ? args->verdict->verdicts : ALL_VERDICTS;
	cfg->actions = args->verdict ? args->verdict->actions : ALL_ACTIONS;
	cfg->snaplen = (__u32)args->snaplen;
	return 0;
}

static int arm(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
	       const struct xrl_datapath *dp,
	       const struct xrl_capture_config *cfg)
{
	pid_t owner = 0;
	int ret = xrl_capture_arm(dp, cfg, &owner);

	if (ret == -EBUSY)
		xrl_cmd_error(cli, cmd, "a capture (pid %d) runs already on "
			      "%s: one at a time", (int)owner, cli->pin_dir);
	else if (ret == -EOPNOTSUPP)
		xrl_cmd_error(cli, cmd, "the program pinned in %s predates "
			      "capture: detach and attach it again",
			      cli->pin_dir);
	else if (ret)
		xrl_cmd_error(cli, cmd, "arming the capture: %s",
			      strerror(-ret));
	return ret;
}

/* Armed, read until stopped, disarmed whatever happened. */
static int capture(const struct xrl_cmd *cmd, const struct xrl_cli *cli,
		   const struct xrl_datapath *dp,
		   const struct xrl_capture_config *cfg,
		   struct capture_run *run)
{
	struct xrl_ring_reader *reader;
	int ret;

	reader = xrl_ring_reader_open(dp->capture_rb_fd,
				      sizeof(struct xrl_capture_record),
				      write_record, run);
	if (!reader) {
		xrl_cmd_error(cli, cmd, "reading the capture ring: %s",
			      strerror(errno));
		return -errno;
	}
	catch_stops();
	ret = arm(cmd, cli, dp, cfg);
	if (!ret) {
		/* The line a caller waits for, as tcpdump's "listening". */
		fprintf(stderr, "capturing from %s to %s\n", cli->pin_dir,
			run->args->path);
		ret = capture_loop(cmd, cli, dp, reader, run);
		xrl_capture_disarm(dp);
		/* What was taken before the disarm, unless -c was met. */
		if (!run_done(run) || stop_signal)
			xrl_ring_reader_drain(reader);
	}
	xrl_ring_reader_close(reader);
	if (ret && ret != -EBUSY && ret != -EOPNOTSUPP)
		xrl_cmd_error(cli, cmd, "reading the capture ring: %s",
			      strerror(-ret));
	return ret;
}

static int run_capture(const struct xrl_cmd *cmd, struct xrl_cli *cli,
		       int argc, char **argv)
{
	struct capture_args args = {};
	struct capture_run run = {};
	struct rule_names names = {};
	struct xrl_capture_config cfg;
	struct xrl_datapath dp;
	int ret, exit_code = EXIT_FAILURE;

	ret = parse_args(cmd, cli, argc, argv, &args);
	if (ret >= 0)
		return ret;
	if (xrl_cmd_open_pins(cmd, cli, &dp))
		return EXIT_FAILURE;
	ret = rule_names_read(cli, &dp, &names);
	if (ret)
		xrl_cmd_error(cli, cmd, "reading the rules: %s",
			      strerror(-ret));
	if (ret || capture_config(cmd, cli, &args, &names, &cfg))
		goto close_dp;
	run.args = &args;
	run.names = &names;
	run.clock_to_unix_ns = xrl_clock_ns(CLOCK_REALTIME) -
			       xrl_capture_clock_ns();
	run.out = open_output(cmd, cli, &args);
	if (!run.out)
		goto close_dp;
	run.write_error = xrl_pcapng_begin(run.out, "xdp-ratelimit",
					   (__u32)args.snaplen);
	if (!run.write_error && !capture(cmd, cli, &dp, &cfg, &run))
		exit_code = EXIT_SUCCESS;
	if (fflush(run.out) && !run.write_error)
		run.write_error = -errno;
	if (run.write_error) {
		xrl_cmd_error(cli, cmd, "writing %s: %s", args.path,
			      strerror(-run.write_error));
		exit_code = EXIT_FAILURE;
	}
	if (run.out != stdout)
		fclose(run.out);
	print_counts(&run, &dp);
close_dp:
	free(names.rules);
	xrl_datapath_close(&dp);
	return exit_code;
}

const struct xrl_cmd xrl_cmd_capture = {
	.name = "capture",
	.synopsis = "[--rule NAME] [--verdict drop|limited|banned|denied|"
		    "blocklisted|passed] [--snaplen N] [-c N] -w FILE",
	.summary = "Sampled copies of judged frames into a pcapng file, "
		   "with their rule and verdict.",
	.opts = capture_opts,
	.run = run_capture,
};
