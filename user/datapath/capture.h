/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * capture.h - a capture of judged frames (bpf/capture.h): armed, kept
 * alive and cleared in xrl_capture, read from xrl_capture_rb. One
 * capture at a time per data path: the config names its owner.
 */
#ifndef XRL_CAPTURE_H
#define XRL_CAPTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include "xrl.h"

struct xrl_datapath;

/* Whether @dp has the capture maps (pins made before them do not). */
bool xrl_capture_supported(const struct xrl_datapath *dp);

/*
 * Arms a capture of @cfg's filter and snaplen owned by this process: the
 * budget (XRL_CAPTURE_PER_SECOND over the CPUs) and the lease are set
 * here, the counts and the ring emptied first. -EBUSY, with *@owner set,
 * when another live capture holds it; else 0 or -errno.
 */
int xrl_capture_arm(const struct xrl_datapath *dp,
		    const struct xrl_capture_config *cfg, pid_t *owner);

/* Moves the lease forward: 0, -EBUSY (*@owner set) when another capture
 * took the config over or the program disarmed it (*@owner 0), -errno. */
int xrl_capture_renew(const struct xrl_datapath *dp, pid_t *owner);

/* Clears the config if this process owns it. 0 or -errno. */
int xrl_capture_disarm(const struct xrl_datapath *dp);

/* The program's clock now (CLOCK_MONOTONIC, as bpf_ktime_get_ns()). */
__u64 xrl_capture_clock_ns(void);

/* The ring's reader: xrl_ring_reader_open(dp->capture_rb_fd, sizeof(struct
 * xrl_capture_record), ...) (event_reader.h). */

#endif
