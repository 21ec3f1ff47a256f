// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * metrics.c - writing the counters of a scrape in the Prometheus text
 * exposition format (collecting them: datapath/metrics_collect.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "counters.h"
#include "metrics.h"

/* ---- writing -------------------------------------------------------- */

/*
 * HELP text escapes backslash and newline; label values also quotes.
 * Most text needs none, and is written whole.
 */
static void write_escaped(FILE *out, const char *text, bool quotes)
{
	if (!strpbrk(text, quotes ? "\\\n\"" : "\\\n")) {
		fputs_unlocked(text, out);
		return;
	}
	for (; *text; text++) {
		if (*text == '\\')
			fputs_unlocked("\\\\", out);
		else if (*text == '\n')
			fputs_unlocked("\\n", out);
		else if (*text == '"' && quotes)
			fputs_unlocked("\\\"", out);
		else
			fputc_unlocked(*text, out);
	}
}

void xrl_metrics_family(FILE *out, const char *name, const char *type,
			const char *help)
{
	fprintf(out, "# HELP %s ", name);
	write_escaped(out, help, false);
	fprintf(out, "\n# TYPE %s %s\n", name, type);
}

static void write_labels(FILE *out, const char *name,
			 const char *const *labels)
{
	size_t i;

	fputs_unlocked(name, out);
	if (!labels || !labels[0])
		return;
	fputc_unlocked('{', out);
	for (i = 0; labels[i] && labels[i + 1]; i += 2) {
		if (i)
			fputc_unlocked(',', out);
		fputs_unlocked(labels[i], out);
		fputs_unlocked("=\"", out);
		write_escaped(out, labels[i + 1], true);
		fputc_unlocked('"', out);
	}
	fputc_unlocked('}', out);
}

void xrl_metrics_sample(FILE *out, const char *name,
			const char *const *labels, double value)
{
	write_labels(out, name, labels);
	fprintf(out, " %.17g\n", value);
}

/* @value in decimal, written backwards ending at @end: its first
 * digit. Thousands per scrape: by hand, not through printf. */
static char *digits_before(char *end, uint64_t value)
{
	do {
		*--end = '0' + value % 10;
		value /= 10;
	} while (value);
	return end;
}

void xrl_metrics_sample_u64(FILE *out, const char *name,
			    const char *const *labels, uint64_t value)
{
	char digits[24], *first;

	digits[sizeof(digits) - 1] = '\0';
	digits[sizeof(digits) - 2] = '\n';
	first = digits_before(digits + sizeof(digits) - 2, value);
	*--first = ' ';
	write_labels(out, name, labels);
	fputs_unlocked(first, out);
}

static void write_totals(FILE *out, const struct xrl_metrics *m)
{
	static const char *const names[] = {
		"xdp_ratelimit_packets_total", "xdp_ratelimit_bytes_total",
	};
	static const char *const helps[] = {
		"Packets judged, by verdict.",
		"Bytes of the frames judged, by verdict.",
	};
	const char *labels[3] = { "verdict", NULL, NULL };
	int kind, v;

	for (kind = 0; kind < 2; kind++) {
		xrl_metrics_family(out, names[kind], "counter", helps[kind]);
		for (v = 0; v < XRL_VERDICT_COUNT; v++) {
			labels[1] = xrl_verdict_name(v);
			xrl_metrics_sample_u64(out, names[kind], labels,
					       kind ? m->totals[v].bytes :
						      m->totals[v].packets);
		}
	}
}

static const char *const rule_outcomes[XRL_RULE_OUTCOMES] = {
	[XRL_RULE_PASSED] = "pass",
	[XRL_RULE_DROPPED] = "drop",
	[XRL_RULE_BANNED] = "banned",
};

/* A monitor rule drops nothing: its own label, so a sum of drops counts
 * only real ones. */
static const char *rule_outcome(const struct xrl_metrics_rule *rule, int o)
{
	return o == XRL_RULE_DROPPED && rule->monitor ? "would_drop" :
						       rule_outcomes[o];
}

/* A rule's lines as xrl_metrics_sample_u64() writes them, through its
 * labels: for a name too long for the buffer of write_rule_lines(). */
static void write_rule_samples(FILE *out, const char *name,
			       const struct xrl_metrics_rule *rule,
			       const char *label, int kind)
{
	const char *labels[5] = { "rule", label, "verdict", NULL, NULL };
	const struct xrl_counter *c;
	int o;

	for (o = 0; o < XRL_RULE_OUTCOMES; o++) {
		c = &rule->counters.outcome[o];
		labels[3] = rule_outcome(rule, o);
		xrl_metrics_sample_u64(out, name, labels,
				       kind ? c->bytes : c->packets);
	}
}

struct line_buf {
	char text[1024];
	size_t len;
	bool full;	/* something did not fit: nothing of it is used */
};

static void put(struct line_buf *b, const char *text, size_t len)
{
	if (b->full || len >= sizeof(b->text) - b->len) {
		b->full = true;
		return;
	}
	memcpy(b->text + b->len, text, len);
	b->len += len;
}

static void put_str(struct line_buf *b, const char *text)
{
	put(b, text, strlen(text));
}

/* @text as write_escaped() writes a label value. */
static void put_label_value(struct line_buf *b, const char *text)
{
	const char *plain;

	while (*text) {
		plain = text + strcspn(text, "\\\n\"");
		put(b, text, plain - text);
		if (!*plain)
			return;
		put(b, *plain == '\n' ? "\\n" : *plain == '"' ? "\\\"" :
			"\\\\", 2);
		text = plain + 1;
	}
}

static void put_u64(struct line_buf *b, uint64_t value)
{
	char digits[24], *end = digits + sizeof(digits);
	char *first = digits_before(end, value);

	put(b, first, end - first);
}

/*
 * A rule's three lines of family @name, as write_rule_samples() writes
 * them, in one write: the part before the verdict made once.
 */
static void write_rule_lines(FILE *out, const char *name,
			     const struct xrl_metrics_rule *rule,
			     const char *label, int kind)
{
	struct line_buf b = { .len = 0 };
	const struct xrl_counter *c;
	size_t head_len;
	int o;

	put_str(&b, name);
	put_str(&b, "{rule=\"");
	put_label_value(&b, label);
	put_str(&b, "\",verdict=\"");
	head_len = b.len;
	for (o = 0; o < XRL_RULE_OUTCOMES; o++) {
		if (o)
			put(&b, b.text, head_len);
		c = &rule->counters.outcome[o];
		put_str(&b, rule_outcome(rule, o));
		put(&b, "\"} ", 3);
		put_u64(&b, kind ? c->bytes : c->packets);
		put(&b, "\n", 1);
	}
	if (b.full)
		write_rule_samples(out, name, rule, label, kind);
	else
		fwrite_unlocked(b.text, 1, b.len, out);
}

static void write_rules(FILE *out, const struct xrl_metrics *m)
{
	static const char *const names[] = {
		"xdp_ratelimit_rule_packets_total",
		"xdp_ratelimit_rule_bytes_total",
	};
	static const char *const helps[] = {
		"Packets of each rule's sources, passed or dropped (monitor "
		"rules: verdict=\"would_drop\").",
		"Bytes of each rule's sources, passed or dropped (monitor "
		"rules: verdict=\"would_drop\").",
	};
	char id_name[32];
	const char *label;
	size_t i;
	int kind;

	for (kind = 0; kind < 2; kind++) {
		xrl_metrics_family(out, names[kind], "counter", helps[kind]);
		for (i = 0; i < m->n_rules; i++) {
			label = m->rules[i].name;
			if (!label) {
				snprintf(id_name, sizeof(id_name), "id-%u",
					 m->rules[i].id);
				label = id_name;
			}
			write_rule_lines(out, names[kind], &m->rules[i], label,
					 kind);
		}
	}
}

/* Only of the rules with escalate_: the others have none. */
static void write_rule_escalations(FILE *out, const struct xrl_metrics *m)
{
	const char *labels[3] = { "rule", NULL, NULL };
	char id_name[32];
	size_t i;

	xrl_metrics_family(out, "xdp_ratelimit_rule_escalated_bans", "gauge",
			   "Escalated bans in force of each rule with "
			   "escalate_ (a prefix each).");
	for (i = 0; i < m->n_rules; i++) {
		if (!m->rules[i].escalates)
			continue;
		snprintf(id_name, sizeof(id_name), "id-%u", m->rules[i].id);
		labels[1] = m->rules[i].name ? m->rules[i].name : id_name;
		xrl_metrics_sample_u64(out, "xdp_ratelimit_rule_escalated_bans",
				       labels, m->rules[i].escalated_bans);
	}
}

static void write_table(FILE *out, const struct xrl_metrics *m)
{
	static const struct {
		enum xrl_table_event event;
		const char *name, *help;
	} families[] = {
		{ XRL_TABLE_INSERT, "xdp_ratelimit_bucket_inserts_total",
		  "Buckets given to new sources." },
		{ XRL_TABLE_INSERT_FAILED,
		  "xdp_ratelimit_bucket_insert_failures_total",
		  "New sources the kernel could make no bucket for (passed)." },
		{ XRL_TABLE_REFUSED, "xdp_ratelimit_new_sources_refused_total",
		  "Packets of new sources refused a bucket by the new-source "
		  "budget." },
	};
	const char *labels[3] = { "verdict", NULL, NULL };
	size_t i;

	for (i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		xrl_metrics_family(out, families[i].name, "counter",
				   families[i].help);
		xrl_metrics_sample_u64(out, families[i].name, NULL,
				       m->table.events[families[i].event]);
	}
	xrl_metrics_family(out, "xdp_ratelimit_fallback_packets_total",
			   "counter", "Packets of refused new sources judged "
			   "by the unknown_sources fallback, by verdict.");
	labels[1] = "pass";
	xrl_metrics_sample_u64(out, "xdp_ratelimit_fallback_packets_total",
			       labels,
			       m->table.events[XRL_TABLE_FALLBACK_PASS]);
	labels[1] = "drop";
	xrl_metrics_sample_u64(out, "xdp_ratelimit_fallback_packets_total",
			       labels,
			       m->table.events[XRL_TABLE_FALLBACK_DROP]);
	xrl_metrics_family(out, "xdp_ratelimit_bucket_evictions_total",
			   "counter", "Live buckets the full table evicted "
			   "(inserts minus tracked sources and the buckets "
			   "reset or a policy change deleted).");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_bucket_evictions_total",
			       NULL, m->evictions);
}

static void write_events(FILE *out, const struct xrl_metrics *m)
{
	const char *labels[3] = { "outcome", NULL, NULL };
	int o;

	xrl_metrics_family(out, "xdp_ratelimit_limit_events_total", "counter",
			   "Limit events (a source starts being limited): "
			   "sent to the daemon, suppressed by the global "
			   "cap, or lost to a full ring buffer.");
	for (o = 0; o < XRL_EVENT_OUTCOMES; o++) {
		labels[1] = xrl_event_outcome_name(o);
		xrl_metrics_sample_u64(out, "xdp_ratelimit_limit_events_total",
				       labels, m->events.count[o]);
	}
}

static void write_bans(FILE *out, const struct xrl_metrics *m)
{
	xrl_metrics_family(out, "xdp_ratelimit_bans_started_total", "counter",
			   "Bans of sources started by rules with ban:.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_bans_started_total", NULL,
			       m->bans.started);
	xrl_metrics_family(out, "xdp_ratelimit_ban_repeats_total", "counter",
			   "Of those, repeat offences (a doubled ban).");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_ban_repeats_total", NULL,
			       m->bans.repeats);
	xrl_metrics_family(out, "xdp_ratelimit_active_bans", "gauge",
			   "Bans in force now: sources a rule banned, and "
			   "bans by hand (a prefix each).");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_active_bans", NULL,
			       m->active_bans);
	xrl_metrics_family(out, "xdp_ratelimit_escalations_total", "counter",
			   "Escalated bans started: prefixes banned once "
			   "escalate_after of their sources were.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_escalations_total", NULL,
			       m->bans.escalated);
	xrl_metrics_family(out, "xdp_ratelimit_escalated_bans", "gauge",
			   "Escalated bans in force now (a prefix each).");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_escalated_bans", NULL,
			       m->escalated_bans);
	xrl_metrics_family(out, "xdp_ratelimit_manual_bans", "gauge",
			   "Entries of the map of bans by hand.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_manual_bans", NULL,
			       m->manual_bans);
	xrl_metrics_family(out, "xdp_ratelimit_manual_bans_capacity", "gauge",
			   "The most bans by hand its map holds.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_manual_bans_capacity", NULL,
			       m->manual_bans_capacity);
}

static void write_blocklists(FILE *out, const struct xrl_metrics *m)
{
	const char *labels[3] = { "list", NULL, NULL };
	size_t i;

	if (!m->n_blocklists)
		return;
	xrl_metrics_family(out, "xdp_ratelimit_blocklist_entries", "gauge",
			   "Prefixes of each blocklist in force.");
	for (i = 0; i < m->n_blocklists; i++) {
		labels[1] = m->blocklists[i].name;
		xrl_metrics_sample_u64(out, "xdp_ratelimit_blocklist_entries",
				       labels, m->blocklists[i].entries);
	}
	xrl_metrics_family(out, "xdp_ratelimit_blocklist_capacity", "gauge",
			   "The most prefixes a blocklist holds.");
	for (i = 0; i < m->n_blocklists; i++) {
		labels[1] = m->blocklists[i].name;
		xrl_metrics_sample_u64(out, "xdp_ratelimit_blocklist_capacity",
				       labels, XRL_BLOCKLIST_ENTRIES);
	}
	xrl_metrics_family(out, "xdp_ratelimit_blocklist_hits_total",
			   "counter", "Packets of sources each blocklist "
			   "holds, since it came in force under its name.");
	for (i = 0; i < m->n_blocklists; i++) {
		labels[1] = m->blocklists[i].name;
		xrl_metrics_sample_u64(out,
				       "xdp_ratelimit_blocklist_hits_total",
				       labels, m->blocklists[i].hits.packets);
	}
}

static void write_gauges(FILE *out, const struct xrl_metrics *m)
{
	if (m->tracked_sources >= 0) {
		xrl_metrics_family(out, "xdp_ratelimit_tracked_sources",
				   "gauge", "Buckets in the bucket map "
				   "(counted in batches at most every 10 s).");
		xrl_metrics_sample_u64(out, "xdp_ratelimit_tracked_sources",
				       NULL, (uint64_t)m->tracked_sources);
	}
	xrl_metrics_family(out, "xdp_ratelimit_bucket_map_capacity", "gauge",
			   "Buckets the bucket map holds at most.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_bucket_map_capacity", NULL,
			       m->capacity);
	if (!m->have_policy)
		return;
	xrl_metrics_family(out, "xdp_ratelimit_policy_generation", "gauge",
			   "Policies the daemon applied since it started.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_policy_generation", NULL,
			       m->generation);
	xrl_metrics_family(out, "xdp_ratelimit_policy_reload_timestamp_seconds",
			   "gauge", "When the policy in force was applied.");
	xrl_metrics_sample(out, "xdp_ratelimit_policy_reload_timestamp_seconds",
			   NULL, m->reload_time);
	if (!m->have_last_reload)
		return;
	xrl_metrics_family(out, "xdp_ratelimit_last_reload_success", "gauge",
			   "1 when the last reload of the policy file (SIGHUP "
			   "or reload) was applied, 0 when it was refused.");
	xrl_metrics_sample_u64(out, "xdp_ratelimit_last_reload_success", NULL,
			       m->last_reload_ok);
	xrl_metrics_family(out, "xdp_ratelimit_last_reload_timestamp_seconds",
			   "gauge", "When the last reload was tried.");
	xrl_metrics_sample(out, "xdp_ratelimit_last_reload_timestamp_seconds",
			   NULL, m->last_reload_time);
}

int xrl_metrics_write(FILE *out, const struct xrl_metrics *m)
{
	write_totals(out, m);
	write_rules(out, m);
	write_table(out, m);
	write_events(out, m);
	write_bans(out, m);
	write_blocklists(out, m);
	write_rule_escalations(out, m);
	write_gauges(out, m);
	if (m->extra)
		m->extra(out, m->extra_ctx);
	return ferror(out) ? -EIO : 0;
}

/*
 * glibc's open_memstream() grows its buffer in small steps: over ten
 * times slower than the formatting itself for a 1,000-rule policy. A
 * cookie stream behind stdio's own buffer appends whole chunks to a
 * buffer that doubles.
 */
struct text_buffer {
	char *text;
	size_t len, cap;
};

static ssize_t append_chunk(void *cookie, const char *chunk, size_t len)
{
	struct text_buffer *buf = cookie;
	size_t cap = buf->cap ? buf->cap : 65536;
	char *grown;

	while (cap < buf->len + len + 1)
		cap *= 2;
	if (cap != buf->cap) {
		grown = realloc(buf->text, cap);
		if (!grown)
			return -1;
		buf->text = grown;
		buf->cap = cap;
	}
	memcpy(buf->text + buf->len, chunk, len);
	buf->len += len;
	buf->text[buf->len] = '\0';
	return len;
}

int xrl_metrics_format(const struct xrl_metrics *m, char **text, size_t *len)
{
	cookie_io_functions_t io = { .write = append_chunk };
	struct text_buffer buf = {};
	FILE *out = fopencookie(&buf, "w", io);
	int ret;

	if (!out)
		return -ENOMEM;
	ret = xrl_metrics_write(out, m);
	if (fclose(out) || ret || !buf.text) {
		free(buf.text);
		return -ENOMEM;
	}
	*text = buf.text;
	*len = buf.len;
	return 0;
}
