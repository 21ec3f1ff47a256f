// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * micro_capture.c - the capture overhead row (micro.h): the limiter with
 * a capture running at its sample bound against the same limiter with
 * none, one hot source over its limit (every packet a limited one, as
 * in an attack), and what that is as a share of a CPU at 1 Mpps: the
 * program's added nanoseconds per packet, plus what writing the frames
 * taken (at most XRL_CAPTURE_PER_SECOND) costs the reader, measured on a
 * thread that reads the ring as `xdp-ratelimit capture` does and writes
 * pcapng to /dev/null.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <bpf/libbpf.h>
#include <linux/bpf.h>
#include "capture.h"
#include "event_reader.h"
#include "clock.h"
#include "loader.h"
#include "micro.h"
#include "pcapng.h"
#include "ref.skel.h"

struct reader {
	const struct xrl_datapath *dp;
	struct xrl_ring_reader *ring;
	FILE *sink;
	volatile bool stop;
	unsigned long long frames;
	double cpu_ns;		/* the thread's, reading and writing */
	int err;
};

static int write_frame(const void *record, void *ctx)
{
	const struct xrl_capture_record *rec = record;
	struct reader *r = ctx;
	char comment[128];

	snprintf(comment, sizeof(comment), "rule=default id=%u verdict=%s "
		 "counter=drop xdp=drop", rec->rule - 1, "limited");
	r->err = xrl_pcapng_frame(r->sink, rec->time_ns, rec->data,
				  rec->cap_len, rec->frame_len, comment);
	r->frames++;
	return r->err;
}

static void *read_ring(void *arg)
{
	struct reader *r = arg;
	pid_t owner;

	while (!r->stop && !r->err) {
		xrl_ring_reader_poll(r->ring, 100);
		/* The lease, as the CLI keeps it (a run outlasts it). */
		if (xrl_capture_renew(r->dp, &owner))
			r->err = -EBUSY;
	}
	xrl_ring_reader_drain(r->ring);
	r->cpu_ns = xrl_clock_ns(CLOCK_THREAD_CPUTIME_ID);
	return NULL;
}

/* Measures, then prints the rows. */
static int measure(struct micro *m, struct xrl_datapath *capturing,
		   struct reader *r, pthread_t thread)
{
	struct side sides[2] = {
		{ .prog_fd = m->dp.prog_fd },
		{ .prog_fd = capturing->prog_fd },
	};
	char value[160], cpu_share[64];
	double program_ns, reader_ns, share;
	__u64 started = xrl_clock_ns(CLOCK_MONOTONIC);
	double seconds;
	int ret;

	ret = micro_side_by_side(m, TRAFFIC_HOT, sides, 2);
	r->stop = true;
	pthread_join(thread, NULL);
	if (ret)
		return ret;
	if (r->err)
		return r->err;
	seconds = (xrl_clock_ns(CLOCK_MONOTONIC) - started) / 1e9;
	micro_row_ns("limiter with a capture running (--verdict limited, at "
		     "its bound) vs without, one hot source over its limit",
		     &sides[1], &sides[0], "", 0);
	/* Nanoseconds a packet adds, times 10^6 packets a second; and the
	 * reader's time per frame at the bound's frames a second. */
	program_ns = sides[1].ns - sides[0].ns;
	reader_ns = r->frames ? r->cpu_ns / r->frames : 0;
	share = (program_ns * 1e6 + reader_ns * XRL_CAPTURE_PER_SECOND) / 1e9;
	snprintf(value, sizeof(value), "%.1f%% (program %+.1f ns/packet, "
		 "reader %.0f ns/frame; %llu frames in %.0f s)", share * 100,
		 program_ns, reader_ns, r->frames, seconds);
	snprintf(cpu_share, sizeof(cpu_share), "%.3f", share);
	bench_row("micro, capture", "capture overhead: share of a CPU at "
		  "1 Mpps, capture at its bound of 10,000 frames/s", value,
		  cpu_share, "< 0.05 of a CPU", bench_verdict(share, 0.05));
	return 0;
}

int micro_capture(struct micro *m)
{
	struct xrl_capture_config cfg = {
		.verdicts = 1U << XRL_VERDICT_DROP | 1U << XRL_VERDICT_MONITOR,
		.actions = 1U << XDP_DROP | 1U << XDP_PASS,
		.snaplen = XRL_CAPTURE_SNAP_MAX,
	};
	struct xrl_datapath capturing;
	struct reader r = {};
	pthread_t thread;
	pid_t owner;
	int ret;

	bench_log("micro: capture overhead");
	ret = xrl_datapath_load(&capturing, NULL);
	if (ret)
		return ret;
	r.dp = &capturing;
	r.sink = fopen("/dev/null", "w");
	ret = r.sink ? 0 : -errno;
	if (!ret)
		ret = micro_apply_over_limit(&m->dp, false);
	if (!ret)
		ret = micro_apply_over_limit(&capturing, false);
	if (!ret)
		ret = xrl_pcapng_begin(r.sink, "bench", XRL_CAPTURE_SNAP_MAX);
	if (!ret)
		ret = xrl_capture_arm(&capturing, &cfg, &owner);
	if (!ret) {
		r.ring = xrl_ring_reader_open(capturing.capture_rb_fd,
					      sizeof(struct xrl_capture_record),
					      write_frame, &r);
		ret = r.ring ? 0 : -errno;
	}
	if (!ret)
		ret = -pthread_create(&thread, NULL, read_ring, &r);
	if (!ret)
		ret = measure(m, &capturing, &r, thread);
	xrl_ring_reader_close(r.ring);
	if (r.sink)
		fclose(r.sink);
	xrl_datapath_close(&capturing);
	return ret;
}
