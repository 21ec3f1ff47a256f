/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * event_reader.h - the reader of the program's ring buffer of limit
 * events (what they mean: events.h).
 */
#ifndef XRL_EVENT_READER_H
#define XRL_EVENT_READER_H

#include "xrl.h"

struct xrl_datapath;

/*
 * The ring buffer's reader: @fn is called for each event read. Returns
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
