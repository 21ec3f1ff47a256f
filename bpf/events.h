/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * events.h - limit events: the moment a source starts being limited,
 * written to a ring buffer for the daemon. Reached from drops only; the
 * pass path never touches these maps. Design: include/xrl.h.
 */
#ifndef XRL_EVENTS_H
#define XRL_EVENTS_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "gcra.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, XRL_EVENTS_RING_BYTES);
} xrl_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct xrl_event_state);
} xrl_event_state SEC(".maps");

/*
 * Takes one event from this CPU's share of the global cap. Per CPU, so
 * a plain read-modify-write, as for the new-source budget.
 */
static __always_inline bool event_admitted(struct xrl_event_state *state,
					   const struct xrl_limit *cap,
					   __u64 now_ns)
{
	__u64 word = limit_admit(state->tat, cap, now_ns,
				 now_ns - state->last_seen_ns, cap->interval);

	if (!word)
		return false;
	state->tat = word;
	state->last_seen_ns = now_ns;
	return true;
}

/*
 * After a drop of @key's packet, with its offender record @off: reports
 * the source when it passed a packet since its last event (it was within
 * its limit, now it is not) and its quiet period is over. A record made
 * at this drop counts no passes yet: its mark says (XRL_MARK_PASSED)
 * whether the bucket admitted any before, and its event has no observed
 * rate (a window of 0), as a clean source keeps no counts. Two CPUs
 * dropping the source's packets at once race for the event with one
 * compare-and-swap on mark_ns; the loser stays quiet. The claim is made
 * before the cap is asked, so a source the cap suppressed is counted
 * once per quiet period, not once per packet.
 */
static __noinline void report_limited(const struct xrl_bucket_key *key,
				      struct xrl_offender *off,
				      const struct xrl_rule *rule,
				      const struct xrl_settings *settings,
				      __u64 now_ns)
{
	__u64 mark = off->mark_ns, passed = off->passed;
	__u64 dropped = off->dropped, since = mark & ~XRL_MARK_BITS;
	struct xrl_event_state *state;
	struct xrl_limit_event *event;
	__u32 zero = 0;

	if (!settings->events.interval)
		return;
	if (passed == off->mark_passed && !(mark & XRL_MARK_PASSED))
		return;
	if ((mark & XRL_MARK_EVENT) &&
	    now_ns - since < settings->event_quiet_ns)
		return;
	if (__sync_val_compare_and_swap(&off->mark_ns, mark,
					(now_ns & ~XRL_MARK_BITS) |
					XRL_MARK_EVENT) != mark)
		return;
	state = bpf_map_lookup_elem(&xrl_event_state, &zero);
	if (!state)
		return;
	if (!event_admitted(state, &settings->events, now_ns)) {
		state->count[XRL_EVENT_SUPPRESSED]++;
		goto move_mark;
	}
	event = bpf_ringbuf_reserve(&xrl_events, sizeof(*event), 0);
	if (!event) {
		state->count[XRL_EVENT_LOST]++;
		goto move_mark;
	}
	__builtin_memcpy(event->addr, key->addr, sizeof(event->addr));
	event->rule_id = rule->id;
	event->action = rule->action;
	event->time_ns = now_ns;
	event->packets = passed + dropped - off->mark_passed -
			 off->mark_dropped;
	event->window_ns = (mark & XRL_MARK_PASSED) ? 0 : now_ns - since;
	event->ban_ns = 0;
	bpf_ringbuf_submit(event, 0);
	state->count[XRL_EVENT_SENT]++;
move_mark:
	off->mark_passed = passed;
	off->mark_dropped = dropped;
}

#endif /* XRL_EVENTS_H */
