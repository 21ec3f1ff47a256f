/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * gcra.h - lock-free GCRA buckets, shared by every CPU.
 *
 * A limit admits a packet of cost c at time t when
 *     debt(t) + c <= tolerance,   debt(t) = max(TAT - t, 0)
 * and then moves TAT to t + debt(t) + c. Exactly "burst" packets pass at
 * one instant, then one per interval; however many CPUs judge packets of
 * one bucket, each admission moves one 64-bit word with one atomic
 * operation, so never more than rate * t + burst pass, and a packet
 * within the limit is never refused because other CPUs got there first
 * (limit_take()). Representation and error bound: struct xrl_limit and
 * struct xrl_bucket in include/xrl.h.
 *
 * A refusal is decided only at a time read after the word that refuses
 * it: a CPU held between reading the clock and reading the word (an
 * interrupt, a descheduled virtual CPU) would otherwise count the
 * admissions other CPUs made meanwhile, later than its reading, as debt
 * owed at that reading, and refuse a packet within its limit. A source's
 * own bucket is read before the clock (bucket_take_read()), so its
 * refusals read the clock once; a bucket judged at a time read before
 * its words (a level's, a prefix's, a word read again after a lost
 * compare-and-swap) reads the clock again before refusing
 * (take_refresh()).
 */
#ifndef XRL_GCRA_H
#define XRL_GCRA_H

#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include "xrl.h"
#include "clock.h"
#include "features.h"

#define TAT_SB		XRL_TAT_SHIFT_BITS
/* A bucket idle this long (in its units) may have wrapped: a debt past
 * the tolerance is then no debt but a wrapped clock, and it is full. */
#define TAT_STALE_BITS	(XRL_TAT_TIME_BITS - 2)
/*
 * Reads of one word before a packet is admitted without a charge. Only a
 * word that stays full (not in debt) through every lost compare-and-swap
 * gets that far (limit_take()): each such loss is a write by a packet
 * that read the clock before ours, and such a packet writes a word at
 * most four times (charge, refund, and the undo pair of a policy race),
 * so 128 reads cover 32 other CPUs all in flight at once.
 */
#define TAKE_ATTEMPTS	128
/* Without bpf_loop() (bpf/features.h) the verifier walks every retry of
 * every limit of bucket_take(): 128 of them are more than a program may
 * hold, this few fit. A lost compare-and-swap is followed by atomic adds
 * that cannot lose, so a retry past the first is rare (a word that stays
 * full through a lost race); the last one admits, as TAKE_ATTEMPTS does. */
#define TAKE_ATTEMPTS_UNROLLED	4

enum take_result {
	TAKE_REFUSED = 0,
	TAKE_CHARGED,	/* admitted, its cost added to the word */
	TAKE_FREE,	/* admitted, no cost added (see limit_take()) */
	TAKE_RETRY,	/* undecided: try again (limit_add()) */
};

static __always_inline __u64 to_units(__u64 ns, __s32 shift)
{
	return shift >= 0 ? ns << shift : ns >> -shift;
}

static __always_inline __s32 tat_shift(__u64 word)
{
	return XRL_TAT_SHIFT(word);
}

static __always_inline __u64 tat_pack(__u64 time_units, __s32 shift)
{
	return (time_units << TAT_SB) | (__u64)(shift + XRL_TAT_SHIFT_BIAS);
}

/* How far the word's TAT lies ahead of now, in the word's own units,
 * sign-extended from 58 bits (negative: behind now). */
static __always_inline __s64 tat_ahead(__u64 word, __u64 now_ns)
{
	return XRL_TAT_AHEAD(word, to_units(now_ns, tat_shift(word)));
}

/* Adds @units (negative: takes them back) to the word's time, atomically;
 * returns the word as it was. The shift in the low bits never changes. */
static __always_inline __u64 tat_add(__u64 *word, __s64 units)
{
	return __sync_fetch_and_add(word, (__u64)units << TAT_SB);
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
	ahead = tat_ahead(word, now_ns);
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
 * A word another CPU wrote, in debt (its TAT at or past now) in the
 * rule's units, with room for @cost: then "TAT + cost" is the GCRA step
 * itself, and an atomic add takes it whatever the other CPUs do.
 */
static __always_inline bool limit_addable(__u64 word,
					  const struct xrl_limit *lim,
					  __u64 now_ns, __u64 cost)
{
	__s64 ahead = tat_ahead(word, now_ns);

	return word && tat_shift(word) == lim->shift && ahead >= 0 &&
	       (__u64)ahead + cost <= lim->tolerance;
}

/*
 * One take from one limit's word: what limit_take() and its attempts
 * share. now_ns and idle_ns may move forward (take_refresh()).
 */
struct take_loop {
	__u64 *word;
	const struct xrl_limit *lim;
	__u64 now_ns;
	__s64 idle_ns;
	__u64 cost;
	enum take_result result;
};

/*
 * Reads the clock again before a refusal, after the word that would
 * refuse (see the top of this file); true when it moved on, with @t's
 * time moved with it. Then the word is judged again: its writers all
 * read the clock before writing it, so at the later reading it owes no
 * more than they judged it to, and a refusal there is one.
 */
static __always_inline bool take_refresh(struct take_loop *t)
{
	__u64 later = clock_after(t->now_ns);

	if (later == t->now_ns)
		return false;
	t->idle_ns += later - t->now_ns;
	t->now_ns = later;
	return true;
}

/*
 * The time at which the word @word read of the limit @lim admits @cost:
 * @now_ns, or when it does not then, a later reading of the clock (see
 * take_refresh()); 0 when it refuses. A global function, checked once on
 * its own, so that its callers' paths do not multiply by its two
 * readings; scalars in and out, as a global function's memory arguments
 * lose what pointers they hold.
 */
__noinline __u64 limit_admits_at(const struct xrl_limit *lim, __u64 word,
				 __u64 now_ns, __s64 idle_ns, __u64 cost)
{
	__u64 later;

	if (!lim)
		return 0;	/* never (a global function's check) */
	if (limit_admit(word, lim, now_ns, idle_ns, cost))
		return now_ns;
	later = clock_after(now_ns);
	if (later == now_ns)
		return 0;
	idle_ns += later - now_ns;
	return limit_admit(word, lim, later, idle_ns, cost) ? later : 0;
}

/* Whether the word @word of the limit @lim admits @t's cost, at @t's time
 * or later (limit_admits_at()); @t's time moves to when it does. */
static __always_inline bool take_admits(struct take_loop *t,
					const struct xrl_limit *lim,
					__u64 word)
{
	__u64 at = limit_admits_at(lim, word, t->now_ns, t->idle_ns, t->cost);

	if (!at)
		return false;
	t->idle_ns += at - t->now_ns;
	t->now_ns = at;
	return true;
}

/*
 * Charges the cost with an atomic add, then judges by the word as the add
 * found it (the add is the moment of decision): over the tolerance, the
 * cost is taken back and the packet refused, unless the clock read again
 * (take_refresh()) finds room: then the add stands as the GCRA step at
 * that time when the word is in debt then, and the packet is taken again
 * when the word is behind it (TAKE_RETRY).
 *
 * Why this is exact: a word only ever overstates its debt in transit (a
 * cost added and not yet taken back), never understates it, so no CPU
 * admits past the tolerance; and a cost is added back only when the add
 * found the word over the tolerance, which with equal costs is over for
 * every packet judged meanwhile. So at one instant exactly "burst" pass
 * (tests/bpf/test_concurrency.c). With unequal costs (bytes) a small
 * packet judged while a refused big one's cost is in transit may be
 * refused too: only at the very edge of the limit, never below it.
 *
 * The add found the word behind now only if a take-back or another CPU's
 * earlier clock reading moved it there after our read; the charge then
 * lands up to that gap in the past (at most the costs in transit, or the
 * CPUs' clock skew), never at one instant: a cost is only ever added to
 * a word at or past now, and a take-back leaves it there.
 */
static __always_inline enum take_result limit_add(struct take_loop *t)
{
	const struct xrl_limit *lim = t->lim;
	__u64 cost = t->cost;
	__u64 old = tat_add(t->word, cost);

	if (tat_shift(old) != lim->shift) {
		/* A packet of another policy's version of this rule rescaled
		 * the word in between: give the units back and judge by the
		 * word as found, uncharged (once per CPU and swap at most). */
		tat_add(t->word, -(__s64)cost);
		return take_admits(t, lim, old) ? TAKE_FREE : TAKE_REFUSED;
	}
	if (tat_ahead(old, t->now_ns) + (__s64)cost <= (__s64)lim->tolerance)
		return TAKE_CHARGED;
	if (take_refresh(t) && limit_addable(old, lim, t->now_ns, cost))
		return TAKE_CHARGED;
	tat_add(t->word, -(__s64)cost);
	return limit_admit(old, lim, t->now_ns, t->idle_ns, cost) ?
	       TAKE_RETRY : TAKE_REFUSED;
}

/* One attempt of limit_take(): 1 when decided. A @retry follows a lost
 * compare-and-swap. */
static __always_inline long take_attempt(struct take_loop *t, bool retry)
{
	__u64 old, new;

	old = *(volatile __u64 *)t->word;
	if (retry && limit_addable(old, t->lim, t->now_ns, t->cost)) {
		t->result = limit_add(t);
		return t->result != TAKE_RETRY;
	}
	if (!take_admits(t, t->lim, old)) {
		t->result = TAKE_REFUSED;
		return 1;
	}
	new = limit_admit(old, t->lim, t->now_ns, t->idle_ns, t->cost);
	if (__sync_val_compare_and_swap(t->word, old, new) == old) {
		t->result = TAKE_CHARGED;
		return 1;
	}
	return 0;
}

/* A retry of limit_take() (a bpf_loop() callback). */
static long take_retry(__u32 i, void *data)
{
	return take_attempt(data, true);
}

/*
 * Takes the cost from one limit's word. The first attempt is a
 * compare-and-swap, exact for every cost and the only way to move a word
 * that is full (behind now), zero, stale or in other units. A lost one
 * means another CPU wrote the word: from then on, a word in debt is taken
 * with one atomic add (limit_add()), which cannot lose, so contention on
 * a bucket in debt costs one retry, and none refuses a packet within its
 * limit.
 *
 * A word that stays full through a lost compare-and-swap was written by
 * a packet that read the clock before ours (a later reading writes a TAT
 * past our now, in debt); at most TAKE_ATTEMPTS of those, and then the
 * packet, within its limit as the last read said, is admitted without a
 * charge rather than refused. At one instant that cannot happen: every
 * write then leaves the word at or past now.
 *
 * The first attempt is inline: without contention it decides, and the
 * packet pays no bpf_loop() call. The retries run under bpf_loop(): the
 * verifier checks one retry instead of walking all TAKE_ATTEMPTS of them
 * (unrolled, they made the program too complex to load). @t is the
 * caller's, one for both limits of a bucket: the stack of the deepest
 * call chain is short (512 bytes for all frames).
 */
static __always_inline enum take_result limit_take(struct take_loop *t,
						   __u64 *word,
						   const struct xrl_limit *lim,
						   __u64 cost)
{
	__u32 i;

	t->word = word;
	t->lim = lim;
	t->cost = cost;
	t->result = TAKE_FREE;	/* every attempt lost to a full word */
	if (take_attempt(t, false))
		return t->result;
	if (have_bpf_loop) {
		bpf_loop(TAKE_ATTEMPTS - 1, take_retry, t, 0);
	} else {
		for (i = 1; i < TAKE_ATTEMPTS_UNROLLED; i++)
			if (take_attempt(t, true))
				break;
	}
	if (t->result == TAKE_RETRY)	/* room at the last reading */
		t->result = TAKE_FREE;
	return t->result;
}

/*
 * Takes back @cost charged to a limit whose packet the other limit then
 * refused, so a refusing limit consumes nothing. One atomic add, exact
 * whatever came in between, unless a new policy rescaled the word
 * meanwhile: then it is left as it is.
 */
static __always_inline void limit_give_back(__u64 *word,
					    const struct xrl_limit *lim,
					    __u64 cost)
{
	__u64 old = tat_add(word, -(__s64)cost);

	if (tat_shift(old) != lim->shift)
		tat_add(word, cost);
}

/* Clears the word of a limit the rule does not set: set again by a later
 * policy, it starts full instead of judging by a state whose clock may
 * have wrapped while the other limit kept the bucket in use (and so kept
 * the idle guard quiet). */
static __always_inline void limit_clear(__u64 *word)
{
	if (*(volatile __u64 *)word)
		*(volatile __u64 *)word = 0;
}

/*
 * What bucket_take() returns: 0 when refused, else TAKEN with a bit for
 * each limit it added a cost to, so that a packet then refused by
 * another bucket (a rule's level, bpf/levels.h) gives back exactly that.
 */
enum bucket_taken {
	TAKEN = 1,
	TAKEN_PACKETS = 2,
	TAKEN_BYTES = 4,
};

/*
 * Tries to take @packets packets of @bytes in all from every limit of
 * @limits (a rule's, a level's or a pool's). Returns non-zero (enum
 * bucket_taken) when all admit them; a limit that refuses leaves every
 * limit as it was.
 *
 * Both limits are first asked without writing, so a packet the byte
 * limit refuses does not touch the packet limit (a flood over its byte
 * rate costs no write). Then packets, then bytes; bytes refusing after
 * all (another CPU took the last bytes in between) gives the packet back.
 *
 * A global function: the verifier checks it once, on its own, instead of
 * at each of its three callers with their states (inlined, the program
 * went past the verifier's million instructions). Its pointers may then
 * be NULL as far as the verifier knows, hence the check.
 */
/*
 * A bucket's words and last admission, as read before the clock
 * (bucket_take_read()): judged at a later reading, they refuse only
 * what is refused then.
 */
struct take_seen {
	__u64 word[XRL_LIMIT_KINDS];
	__u64 last_seen_ns;
};

/*
 * Whether @lim's word admits @t's cost at @t's time: @seen's word, read
 * before that time (no second reading needed), or else the word now,
 * read after it (take_admits(): read again before a refusal).
 */
static __always_inline bool take_asks(struct take_loop *t,
				      const struct xrl_limit *lim,
				      const __u64 *word,
				      const struct take_seen *seen, int kind)
{
	if (seen)
		return limit_admit(seen->word[kind & 1], lim, t->now_ns,
				   t->idle_ns, t->cost) != 0;
	return take_admits(t, lim, *(volatile __u64 *)word);
}

/* bucket_take()'s body; @seen: the words read before @now_ns, or NULL. */
static __always_inline int take_bucket(struct xrl_bucket *b,
				       const struct xrl_limits *limits,
				       __u64 now_ns, __u64 last_seen_ns,
				       __u64 packets, __u64 bytes,
				       const struct take_seen *seen)
{
	const struct xrl_limit *pkt = &limits->kind[XRL_LIMIT_PACKETS];
	const struct xrl_limit *byte = &limits->kind[XRL_LIMIT_BYTES];
	__u64 *pkt_word = &b->tat[XRL_LIMIT_PACKETS];
	__u64 *byte_word = &b->tat[XRL_LIMIT_BYTES];
	__u64 pkt_cost = pkt->interval * packets;
	__u64 byte_cost = byte->interval * bytes;
	enum take_result taken = TAKE_FREE, byte_taken = TAKE_FREE;
	struct take_loop t = { .now_ns = now_ns };

	/*
	 * Another CPU admitted a packet of this bucket at a later time
	 * than our reading of the clock (this CPU was held between reading
	 * it and getting here: an interrupt, a descheduled virtual CPU).
	 * The time now is at least that CPU's: judged at our older reading,
	 * its admissions would look like debt owed all at once, and past a
	 * short tolerance (a burst of 2^32 at 10^12 pps is 4.3 ms) refuse a
	 * packet within its limit. So the packet is judged at the later
	 * time, which never lies ahead of the real one.
	 */
	t.idle_ns = now_ns - last_seen_ns;
	if (t.idle_ns < 0) {
		t.now_ns -= t.idle_ns;	/* the other CPU's last_seen_ns */
		t.idle_ns = 0;
	}

	/* Asked first without writing (take_asks()). */
	t.lim = pkt;
	t.cost = pkt_cost;
	if (pkt->interval &&
	    !take_asks(&t, pkt, pkt_word, seen, XRL_LIMIT_PACKETS))
		return false;
	t.lim = byte;
	t.cost = byte_cost;
	if (byte->interval &&
	    !take_asks(&t, byte, byte_word, seen, XRL_LIMIT_BYTES))
		return false;

	if (pkt->interval) {
		taken = limit_take(&t, pkt_word, pkt, pkt_cost);
		if (taken == TAKE_REFUSED)
			return false;
	} else {
		limit_clear(pkt_word);
	}
	if (byte->interval) {
		byte_taken = limit_take(&t, byte_word, byte, byte_cost);
		if (byte_taken == TAKE_REFUSED) {
			if (taken == TAKE_CHARGED)
				limit_give_back(pkt_word, pkt, pkt_cost);
			return false;
		}
	} else {
		limit_clear(byte_word);
	}
	b->last_seen_ns = t.now_ns;
	return TAKEN | (taken == TAKE_CHARGED ? TAKEN_PACKETS : 0) |
	       (byte_taken == TAKE_CHARGED ? TAKEN_BYTES : 0);
}

__noinline int bucket_take(struct xrl_bucket *b,
			   const struct xrl_limits *limits,
			   __u64 now_ns, __u64 packets, __u64 bytes)
{
	if (!b || !limits)
		return false;
	return take_bucket(b, limits, now_ns, b->last_seen_ns, packets, bytes,
			   NULL);
}

/*
 * bucket_take() for a bucket whose words are read first, then the clock
 * (a source's own: see the top of this file); the reading in *@read_ns.
 * A refusal then reads the clock once.
 */
__noinline int bucket_take_read(struct xrl_bucket *b,
				const struct xrl_limits *limits,
				__u64 packets, __u64 bytes, __u64 *read_ns)
{
	struct take_seen seen;

	if (!b || !limits || !read_ns)
		return false;
	seen.word[XRL_LIMIT_PACKETS] =
		*(volatile __u64 *)&b->tat[XRL_LIMIT_PACKETS];
	seen.word[XRL_LIMIT_BYTES] =
		*(volatile __u64 *)&b->tat[XRL_LIMIT_BYTES];
	seen.last_seen_ns = *(volatile __u64 *)&b->last_seen_ns;
	/* Ordered after the loads above: a call, which the compiler does
	 * not move loads of memory across. */
	*read_ns = now_ns();
	return take_bucket(b, limits, *read_ns, seen.last_seen_ns, packets,
			   bytes, &seen);
}

/*
 * Gives back what bucket_take() took (@taken, its result) for a packet
 * refused after all. A charge moved a word from its debt at now (0 when
 * full) to that debt + cost, so taking the cost back leaves it as full
 * as it was, whatever other packets took meanwhile.
 */
static __always_inline void bucket_give_back(struct xrl_bucket *b,
					     const struct xrl_limits *limits,
					     int taken, __u64 packets,
					     __u64 bytes)
{
	const struct xrl_limit *pkt = &limits->kind[XRL_LIMIT_PACKETS];
	const struct xrl_limit *byte = &limits->kind[XRL_LIMIT_BYTES];

	if (taken & TAKEN_PACKETS)
		limit_give_back(&b->tat[XRL_LIMIT_PACKETS], pkt,
				pkt->interval * packets);
	if (taken & TAKEN_BYTES)
		limit_give_back(&b->tat[XRL_LIMIT_BYTES], byte,
				byte->interval * bytes);
}

#endif /* XRL_GCRA_H */
