/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * event_reader.h - the readers of the program's ring buffers: any of
 * them (a ring reader), and the one of limit events (what they mean:
 * events.h). A capture's ring is read with a ring reader (capture.h).
 */
#ifndef XRL_EVENT_READER_H
#define XRL_EVENT_READER_H

#include <stddef.h>
#include "xrl.h"

struct xrl_datapath;

/*
 * A reader of the ring buffer @map_fd: @fn is called for each record of
 * at least @record_size bytes (shorter ones are skipped). Returns NULL
 * with errno set when the map cannot be read.
 */
struct xrl_ring_reader;
typedef int (*xrl_record_fn)(const void *record, void *ctx);

struct xrl_ring_reader *xrl_ring_reader_open(int map_fd, size_t record_size,
					     xrl_record_fn fn, void *ctx);
/* An fd readable when records wait (for epoll). */
int xrl_ring_reader_fd(const struct xrl_ring_reader *reader);
/* Waits up to @timeout_ms, then reads every record waiting (whether a
 * wakeup came or not: a program may submit without one); returns how
 * many, or -errno (-EINTR when a signal came). */
int xrl_ring_reader_poll(struct xrl_ring_reader *reader, int timeout_ms);
/* Reads every record waiting; returns how many, or -errno. */
int xrl_ring_reader_drain(struct xrl_ring_reader *reader);
void xrl_ring_reader_close(struct xrl_ring_reader *reader);

/*
 * The limit events' reader: @fn is called for each event read. Returns
 * NULL with errno set when the map cannot be read.
 */
struct xrl_event_reader;
typedef int (*xrl_event_fn)(const struct xrl_limit_event *event, void *ctx);

struct xrl_event_reader *xrl_event_reader_open(const struct xrl_datapath *dp,
					       xrl_event_fn fn, void *ctx);
/* An fd readable when events wait (for epoll). */
int xrl_event_reader_fd(const struct xrl_event_reader *reader);
/* Reads every event waiting; returns how many, or -errno. */
int xrl_event_reader_drain(struct xrl_event_reader *reader);
void xrl_event_reader_close(struct xrl_event_reader *reader);

#endif
