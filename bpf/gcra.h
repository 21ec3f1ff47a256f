/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * gcra.h - lock-free GCRA buckets, shared by every CPU.
 *
 * A limit admits a packet of cost c at time t when
 *     debt(t) + c <= tolerance,   debt(t) = max(TAT - t, 0)
 * and then moves TAT to t + debt(t) + c. Exactly "burst" packets pass at
 * one instant, then one per interval; however many CPUs judge packets of
 * one bucket, each admission is one compare-and-swap of one 64-bit word,
 * so never more than rate * t + burst pass. Representation and error
 * bound: struct xrl_limit and struct xrl_bucket in include/xrl.h.
 */
#ifndef XRL_GCRA_H
#define XRL_GCRA_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"

#define TAT_TIME_MASK	((1ULL << XRL_TAT_TIME_BITS) - 1)
#define TAT_SIGN_SHIFT	(64 - XRL_TAT_TIME_BITS)
/* A bucket idle this long (in its units) may have wrapped: a debt past
 * the tolerance is then no debt but a wrapped clock, and it is full. */
#define TAT_STALE_BITS	(XRL_TAT_TIME_BITS - 2)
/*
 * Compare-and-swap attempts before a packet is refused. A failed attempt
 * means another CPU admitted or refunded in between, so with two CPUs
 * this bound is never reached in practice; refusing then errs on the
 * side of the limit.
 */
#define CAS_ATTEMPTS	16

static __always_inline __u64 to_units(__u64 ns, __s32 shift)
{
	return shift >= 0 ? ns << shift : ns >> -shift;
}

static __always_inline __s32 tat_shift(__u64 word)
{
	return (__s32)(word >> XRL_TAT_TIME_BITS) - XRL_TAT_SHIFT_BIAS;
}

static __always_inline __u64 tat_pack(__u64 time_units, __s32 shift)
{
	return ((__u64)(shift + XRL_TAT_SHIFT_BIAS) << XRL_TAT_TIME_BITS) |
	       (time_units & TAT_TIME_MASK);
}

/*
 * True when the bucket was idle long enough for its clock to wrap. A CPU
 * whose "now" was read just before another CPU's admission sees a
 * negative idle time: that bucket is fresh, not stale.
 */
static __always_inline bool tat_is_stale(__s32 shift, __s64 idle_ns)
{
	__s32 ns_bits = TAT_STALE_BITS - shift;

	return idle_ns > 0 && ns_bits < 63 && (idle_ns >> ns_bits) != 0;
}

/*
 * How far ahead of now the word's TAT lies, in the units of @lim (the
 * rule in force, whose shift may differ from the one the word was
 * written with after a policy change): 0 when the bucket is full, past
 * the tolerance when it must refuse.
 *
 * A debt within the tolerance is believed even when last_seen_ns says
 * the bucket idled past the wrap horizon: that is how a word just
 * written by another CPU looks until that CPU stores last_seen_ns, and
 * taking it for a wrapped one would refill the burst. A word that did
 * wrap lands there with a chance of tolerance / 2^58 and then holds the
 * source back for at most one burst's time.
 */
static __always_inline __u64 limit_debt(__u64 word, const struct xrl_limit *lim,
					__u64 now_ns, __s64 idle_ns)
{
	__s32 shift = tat_shift(word);
	__s32 grow = lim->shift - shift;
	__s64 ahead;

	if (word == 0)
		return 0;
	ahead = (__s64)((word - to_units(now_ns, shift)) << TAT_SIGN_SHIFT) >>
		TAT_SIGN_SHIFT;
	if (ahead <= 0)
		return 0;
	/* Compared before rescaling, so a finer unit cannot overflow. */
	if (grow >= 0 && ahead <= (lim->tolerance >> grow))
		return (__u64)ahead << grow;
	if (grow < 0 && ((__u64)ahead >> -grow) <= lim->tolerance)
		return (__u64)ahead >> -grow;
	/* Past the tolerance: a debt from before a policy change, or a
	 * clock that wrapped while the bucket idled. */
	return tat_is_stale(shift, idle_ns) ? 0 : lim->tolerance + 1;
}

/*
 * The word a limit would hold after admitting @cost at @now_ns, or 0 when
 * it refuses. A zero word never occurs as a real state (shift + bias > 0).
 */
static __always_inline __u64 limit_admit(__u64 word, const struct xrl_limit *lim,
					 __u64 now_ns, __s64 idle_ns,
					 __u64 cost)
{
	__u64 debt = limit_debt(word, lim, now_ns, idle_ns) + cost;

	if (debt > lim->tolerance)
		return 0;
	return tat_pack(to_units(now_ns, lim->shift) + debt, lim->shift);
}

/*
 * Takes @cost back from a limit whose CAS succeeded but whose packet was
 * refused by the other limit, so a refusing limit consumes nothing.
 * Exact when nothing, or only packets judged before our TAT, came in
 * between (always so at one instant). A CPU whose clock had already
 * passed our TAT built on "now" instead, and the refund then credits it
 * one cost it never owed: at most one interval per lost race on bytes,
 * and only where CPU clocks differ by more than an interval.
 */
static __always_inline void limit_refund(__u64 *word, __u64 taken, __u64 cost)
{
	__s32 shift = tat_shift(taken);
	__u64 old = taken, back, seen;
	int i;

	for (i = 0; i < CAS_ATTEMPTS; i++) {
		if (tat_shift(old) != shift)
			return;	/* rescaled by a new policy: leave it */
		back = tat_pack((old & TAT_TIME_MASK) - cost, shift);
		seen = __sync_val_compare_and_swap(word, old, back);
		if (seen == old)
			return;
		old = seen;
	}
}

/*
 * Tries to take @packets packets of @bytes in all (one frame, or the
 * wire packets of an aggregate: bpf/parse.h) from every limit of @rule.
 * Returns true when all admit them; a limit that refuses leaves every
 * limit as it was. The word of a limit the rule does not set is cleared:
 * set again by a later policy, it starts full instead of judging by a
 * state whose clock may have wrapped while the other limit kept the
 * bucket in use (and so kept the idle guard quiet).
 */
static __always_inline bool bucket_take(struct xrl_bucket *b,
					const struct xrl_rule *rule,
					__u64 now_ns, __u64 packets,
					__u64 bytes)
{
	const struct xrl_limit *pkt = &rule->limit[XRL_LIMIT_PACKETS];
	const struct xrl_limit *byte = &rule->limit[XRL_LIMIT_BYTES];
	__u64 pkt_cost = pkt->interval * packets;
	__u64 byte_cost = byte->interval * bytes;
	__s64 idle_ns = now_ns - b->last_seen_ns;
	__u64 pkt_old, pkt_new, byte_old, byte_new;
	int i;

	for (i = 0; i < CAS_ATTEMPTS; i++) {
		pkt_old = *(volatile __u64 *)&b->tat[XRL_LIMIT_PACKETS];
		byte_old = *(volatile __u64 *)&b->tat[XRL_LIMIT_BYTES];
		pkt_new = 0;
		byte_new = 0;
		/* Decide on both before writing either. */
		if (pkt->interval) {
			pkt_new = limit_admit(pkt_old, pkt, now_ns, idle_ns,
					      pkt_cost);
			if (!pkt_new)
				return false;
		}
		if (byte->interval) {
			byte_new = limit_admit(byte_old, byte, now_ns, idle_ns,
					       byte_cost);
			if (!byte_new)
				return false;
		}
		if (pkt_new != pkt_old && __sync_val_compare_and_swap(
				&b->tat[XRL_LIMIT_PACKETS], pkt_old,
				pkt_new) != pkt_old)
			continue;
		if (byte_new != byte_old && __sync_val_compare_and_swap(
				&b->tat[XRL_LIMIT_BYTES], byte_old,
				byte_new) != byte_old) {
			/* Lost a race on bytes: give the packet back. */
			if (pkt->interval)
				limit_refund(&b->tat[XRL_LIMIT_PACKETS],
					     pkt_new, pkt_cost);
			continue;
		}
		b->last_seen_ns = now_ns;
		return true;
	}
	return false;
}

#endif /* XRL_GCRA_H */
