// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * event_reader.c - limit events read from the program's ring buffer.
 */
#include <errno.h>
#include <stdlib.h>
#include <bpf/libbpf.h>
#include "datapath.h"
#include "event_reader.h"

struct xrl_event_reader {
	struct ring_buffer *ring;
	xrl_event_fn fn;
	void *ctx;
};

static int handle_sample(void *ctx, void *data, size_t size)
{
	struct xrl_event_reader *reader = ctx;

	if (size < sizeof(struct xrl_limit_event))
		return 0;
	return reader->fn(data, reader->ctx);
}

struct xrl_event_reader *xrl_event_reader_open(const struct xrl_datapath *dp,
					       xrl_event_fn fn, void *ctx)
{
	struct xrl_event_reader *reader = calloc(1, sizeof(*reader));
	int err;

	if (!reader)
		return NULL;
	reader->fn = fn;
	reader->ctx = ctx;
	reader->ring =
		ring_buffer__new(dp->events_fd, handle_sample, reader, NULL);
	if (!reader->ring) {
		err = errno;
		free(reader);
		errno = err;
		return NULL;
	}
	return reader;
}

int xrl_event_reader_fd(const struct xrl_event_reader *reader)
{
	return ring_buffer__epoll_fd(reader->ring);
}

int xrl_event_reader_drain(struct xrl_event_reader *reader)
{
	return ring_buffer__consume(reader->ring);
}

void xrl_event_reader_close(struct xrl_event_reader *reader)
{
	if (!reader)
		return;
	ring_buffer__free(reader->ring);
	free(reader);
}
