// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * event_reader.c - records read from the program's ring buffers: limit
 * events, a capture's frames (event_reader.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "datapath.h"
#include "event_reader.h"

/* Frees what an open that failed made, keeping its errno. */
static void *open_failed(void *reader)
{
	int err = errno;

	free(reader);
	errno = err;
	return NULL;
}

struct xrl_ring_reader {
	struct ring_buffer *ring;
	size_t record_size;
	xrl_record_fn fn;
	void *ctx;
};

static int handle_sample(void *ctx, void *data, size_t size)
{
	struct xrl_ring_reader *reader = ctx;

	if (size < reader->record_size)
		return 0;
	return reader->fn(data, reader->ctx);
}

struct xrl_ring_reader *xrl_ring_reader_open(int map_fd, size_t record_size,
					     xrl_record_fn fn, void *ctx)
{
	struct xrl_ring_reader *reader = calloc(1, sizeof(*reader));

	if (!reader)
		return NULL;
	reader->record_size = record_size;
	reader->fn = fn;
	reader->ctx = ctx;
	reader->ring = ring_buffer__new(map_fd, handle_sample, reader, NULL);
	return reader->ring ? reader : open_failed(reader);
}

int xrl_ring_reader_fd(const struct xrl_ring_reader *reader)
{
	return ring_buffer__epoll_fd(reader->ring);
}

int xrl_ring_reader_poll(struct xrl_ring_reader *reader, int timeout_ms)
{
	int ret = ring_buffer__poll(reader->ring, timeout_ms);

	return ret ? ret : ring_buffer__consume(reader->ring);
}

int xrl_ring_reader_drain(struct xrl_ring_reader *reader)
{
	return ring_buffer__consume(reader->ring);
}

void xrl_ring_reader_close(struct xrl_ring_reader *reader)
{
	if (!reader)
		return;
	ring_buffer__free(reader->ring);
	free(reader);
}

struct xrl_event_reader {
	struct xrl_ring_reader *ring;
	xrl_event_fn fn;
	void *ctx;
};

static int handle_event(const void *record, void *ctx)
{
	struct xrl_event_reader *reader = ctx;

	return reader->fn(record, reader->ctx);
}

struct xrl_event_reader *xrl_event_reader_open(const struct xrl_datapath *dp,
					       xrl_event_fn fn, void *ctx)
{
	struct xrl_event_reader *reader = calloc(1, sizeof(*reader));

	if (!reader)
		return NULL;
	reader->fn = fn;
	reader->ctx = ctx;
	reader->ring = xrl_ring_reader_open(dp->events_fd,
					    sizeof(struct xrl_limit_event),
					    handle_event, reader);
	return reader->ring ? reader : open_failed(reader);
}

int xrl_event_reader_fd(const struct xrl_event_reader *reader)
{
	return xrl_ring_reader_fd(reader->ring);
}

int xrl_event_reader_drain(struct xrl_event_reader *reader)
{
	return xrl_ring_reader_drain(reader->ring);
}

void xrl_event_reader_close(struct xrl_event_reader *reader)
{
	if (!reader)
		return;
	xrl_ring_reader_close(reader->ring);
	free(reader);
}
