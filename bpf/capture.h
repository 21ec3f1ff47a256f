/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * capture.h - sampled copies of judged frames, with their rule and
 * verdict, for `xdp-ratelimit capture` (design: include/xrl.h,
 * "Capture").
 *
 * While no capture runs, a packet costs one read of xrl_capture's
 * armed word at each of three places: the exit (capture_armed()), and
 * where its rule and its verdict are counted (capture_note_*()), which
 * note them for the exit only while a capture runs. Everything else
 * (the clock, the filter, the budget, the copy) is capture_verdict()'s,
 * a global function called at the exit, after the judging chain has
 * returned, so its frame never adds to that chain's stack.
 */
#ifndef XRL_CAPTURE_H
#define XRL_CAPTURE_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "clock.h"
#include "events.h"
#include "features.h"

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_capture_config);
} xrl_capture SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XRL_CAPTURE_RING_BYTES);
} xrl_capture_rb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_capture_state);
} xrl_capture_st SEC(".maps");

static __always_inline struct xrl_capture_config *capture_config(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xrl_capture, &zero);
}

/* Whether a capture runs (an array's lookup: inlined, no helper call). */
static __always_inline bool capture_armed(void)
{
	const struct xrl_capture_config *cfg = capture_config();

	return cfg && cfg->armed;
}

static __always_inline struct xrl_capture_state *capture_state(void)
{
	__u32 zero = 0;

	return bpf_map_lookup_elem(&xrl_capture_st, &zero);
}

/* The rule that judges the packet, noted while a capture runs. */
static __always_inline void capture_note_rule(__u32 rule_id)
{
	struct xrl_capture_state *st;

	if (!capture_armed())
		return;
	st = capture_state();
	if (st)
		st->noted_rule = rule_id + 1;
}

/* The packet's verdict, noted while a capture runs. */
static __always_inline void capture_note_verdict(enum xrl_verdict verdict)
{
	struct xrl_capture_state *st;

	if (!capture_armed())
		return;
	st = capture_state();
	if (st)
		st->noted_verdict = verdict + 1;
}

/*
 * Without bpf_xdp_load_bytes(): the linear part, a byte at a time, in a
 * loop the verifier walks with a known index (at most
 * XRL_CAPTURE_SNAP_MAX steps). Returns the bytes copied.
 */
static __always_inline __u32 capture_copy_linear(struct xdp_md *ctx,
						 __u8 *to, __u32 len)
{
	const __u8 *data = (const __u8 *)(long)ctx->data;
	const __u8 *end = (const __u8 *)(long)ctx->data_end;
	__u32 i;

	for (i = 0; i < XRL_CAPTURE_SNAP_MAX; i++) {
		if (i >= len || data + i + 1 > end)
			break;
		to[i] = data[i];
	}
	return i;
}

/* Whether the capture takes a frame of @verdict, @action, @rule. */
static __always_inline bool capture_wants(const struct xrl_capture_config *cfg,
					  __u32 verdict, int action,
					  __u32 rule)
{
	if (verdict >= 32 || action < 0 || action >= 32)
		return false;
	if (!(cfg->verdicts & (1U << verdict)) ||
	    !(cfg->actions & (1U << action)))
		return false;
	return !cfg->rule || cfg->rule == rule;
}

/* Fills @rec with the frame and its judgement; false to discard it. */
static __always_inline bool capture_fill(struct xdp_md *ctx,
					 struct xrl_capture_record *rec,
					 const struct xrl_capture_config *cfg,
					 __u64 frame_len)
{
	__u32 len = cfg->snaplen;

	if (len > frame_len)
		len = frame_len;
	if (len > XRL_CAPTURE_SNAP_MAX)
		len = XRL_CAPTURE_SNAP_MAX;
	if (have_xdp_load_bytes) {
		if (len < 1)
			return false;
		/* 1 to XRL_CAPTURE_SNAP_MAX in a form Linux 6.1's verifier
		 * bounds (it learns no lower bound from "len != 0"). */
		len = ((len - 1) & (XRL_CAPTURE_SNAP_MAX - 1)) + 1;
		_Static_assert(!(XRL_CAPTURE_SNAP_MAX & (XRL_CAPTURE_SNAP_MAX - 1)),
			       "a power of two: the mask above");
		if (bpf_xdp_load_bytes(ctx, 0, rec->data, len))
			return false;
	} else {
		len = capture_copy_linear(ctx, rec->data, len);
	}
	rec->cap_len = len;
	rec->frame_len = frame_len;
	return true;
}

/* Disarms a capture past its lease (its CLI gone without clearing it). */
static __always_inline bool capture_lease_over(struct xrl_capture_config *cfg,
					       __u64 now)
{
	if (now <= cfg->until_ns)
		return false;
	cfg->armed = 0;
	return true;
}

/*
 * At the exit, while a capture runs: the frame, if the capture takes
 * it and the budget has room, into the ring. A frame it does not take
 * costs no clock read (but every XRL_CAPTURE_LEASE_EVERY-th, for the
 * lease); nor does one of those the budget skips after a refusal, so
 * a flood over the budget mostly costs a count.
 */
__noinline int capture_verdict(struct xdp_md *ctx, int action)
{
	struct xrl_capture_config *cfg = capture_config();
	struct xrl_capture_state *st = capture_state();
	struct xrl_capture_record *rec;
	__u32 verdict, rule;
	__u64 frame_len, now;

	if (!ctx || !cfg || !st)
		return 0;
	verdict = st->noted_verdict;
	rule = st->noted_rule;
	st->noted_verdict = 0;
	st->noted_rule = 0;
	if (!verdict || !capture_wants(cfg, verdict - 1, action, rule)) {
		if (++st->untaken & (XRL_CAPTURE_LEASE_EVERY - 1))
			return 0;
		capture_lease_over(cfg, now_ns());
		return 0;
	}
	if (st->skip) {
		st->skip--;
		st->budget.count[XRL_CAPTURE_SAMPLED_OUT]++;
		return 0;
	}
	now = now_ns();
	if (capture_lease_over(cfg, now))
		return 0;
	if (!event_admitted(&st->budget, &cfg->budget, now)) {
		st->budget.count[XRL_CAPTURE_SAMPLED_OUT]++;
		st->skip_len = st->skip_len * 2 + 1;
		if (st->skip_len > XRL_CAPTURE_SKIP_MAX)
			st->skip_len = XRL_CAPTURE_SKIP_MAX;
		st->skip = st->skip_len;
		return 0;
	}
	st->skip_len = 0;
	rec = bpf_ringbuf_reserve(&xrl_capture_rb, sizeof(*rec), 0);
	if (!rec) {
		st->budget.count[XRL_CAPTURE_LOST]++;
		return 0;
	}
	frame_len = have_xdp_load_bytes ? bpf_xdp_get_buff_len(ctx) :
		    ctx->data_end - ctx->data;
	if (!capture_fill(ctx, rec, cfg, frame_len)) {
		bpf_ringbuf_discard(rec, 0);
		st->budget.count[XRL_CAPTURE_LOST]++;
		return 0;
	}
	rec->time_ns = now;
	rec->rule = rule;
	rec->verdict = verdict - 1;
	rec->action = action;
	rec->reserved = 0;
	/* No wakeup: the reader polls the ring on a timer, so a frame costs
	 * neither side a notification. */
	bpf_ringbuf_submit(rec, BPF_RB_NO_WAKEUP);
	st->budget.count[XRL_CAPTURE_TAKEN]++;
	return 1;
}

#endif /* XRL_CAPTURE_H */
