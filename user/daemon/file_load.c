// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * file_load.c - a policy file read on a thread of its own (file_load.h).
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>
#include "file_load.h"
#include "policy_read.h"

#define LOAD_NICE	19	/* the reading thread's nice: the lowest */

int xrl_file_load_init(struct xrl_file_load *load)
{
	memset(load, 0, sizeof(*load));
	load->done_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	return load->done_fd < 0 ? -errno : 0;
}

static void *load_thread(void *arg)
{
	struct xrl_file_load *load = arg;
	uint64_t one = 1;

	/* This thread alone (Linux's nice is per thread): the control loop
	 * comes first on a busy machine. Best effort. */
	setpriority(PRIO_PROCESS, 0, LOAD_NICE);
	load->ret = xrl_config_load_file(load->path, &load->config, load->err,
					 sizeof(load->err));
	/* An eventfd write of 1 cannot fail short of a bug. */
	if (write(load->done_fd, &one, sizeof(one)) != sizeof(one))
		abort();
	return NULL;
}

int xrl_file_load_start(struct xrl_file_load *load, const char *path)
{
	sigset_t all, old;
	int ret;

	if (load->running)
		return -EBUSY;
	free(load->path);
	load->path = strdup(path);
	if (!load->path)
		return -ENOMEM;
	/* The signals stay with the control loop's signalfd. */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	ret = -pthread_create(&load->thread, NULL, load_thread, load);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		free(load->path);
		load->path = NULL;
		return ret;
	}
	load->running = true;
	return 0;
}

int xrl_file_load_finish(struct xrl_file_load *load,
			 struct xrl_config *config, char *err, size_t len)
{
	uint64_t count;
	int ret;

	if (!load->running)
		return -EINVAL;
	pthread_join(load->thread, NULL);
	load->running = false;
	/* Emptied for the next load (read or not, the thread is done). */
	if (read(load->done_fd, &count, sizeof(count)) < 0)
		count = 0;
	ret = load->ret;
	if (ret)
		snprintf(err, len, "%s", load->err);
	else
		*config = load->config;
	memset(&load->config, 0, sizeof(load->config));
	return ret;
}

void xrl_file_load_free(struct xrl_file_load *load)
{
	struct xrl_config config;
	char err[8];

	if (load->running &&
	    !xrl_file_load_finish(load, &config, err, sizeof(err)))
		xrl_config_free(&config);
	if (load->done_fd >= 0)
		close(load->done_fd);
	load->done_fd = -1;
	free(load->path);
	load->path = NULL;
}
