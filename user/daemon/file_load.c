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
#include "blocklists.h"
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
	if (load->list.active)
		load->ret = xrl_blocklist_build(&load->list.spec,
						&load->list.fd,
						&load->list.entries, load->err,
						sizeof(load->err));
	else
		load->ret = xrl_config_load_file(load->path, &load->config,
						 load->err, sizeof(load->err));
	/* A policy's lists too: reading and building them is most of a
	 * reload of large lists. */
	if (!load->list.active && !load->ret) {
		load->ret = xrl_blocklists_build(&load->config.policy,
						 load->err, sizeof(load->err));
		if (load->ret)
			xrl_config_free(&load->config);
	}
	/* An eventfd write of 1 cannot fail short of a bug. */
	if (write(load->done_fd, &one, sizeof(one)) != sizeof(one))
		abort();
	return NULL;
}

static int start(struct xrl_file_load *load, const char *path);

int xrl_file_load_start(struct xrl_file_load *load, const char *path)
{
	if (load->running)
		return -EBUSY;
	load->list.active = false;
	return start(load, path);
}

int xrl_file_load_start_list(struct xrl_file_load *load,
			     const struct xrl_blocklist_spec *spec)
{
	if (load->running)
		return -EBUSY;
	load->list.active = true;
	load->list.spec = *spec;
	load->list.fd = -1;
	load->list.entries = 0;
	return start(load, spec->file);
}

static int start(struct xrl_file_load *load, const char *path)
{
	sigset_t all, old;
	int ret;

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

/* Waits for the thread; its result. */
static int join(struct xrl_file_load *load, char *err, size_t len)
{
	uint64_t count;

	pthread_join(load->thread, NULL);
	load->running = false;
	/* Emptied for the next load (read or not, the thread is done). */
	if (read(load->done_fd, &count, sizeof(count)) < 0)
		count = 0;
	if (load->ret)
		snprintf(err, len, "%s", load->err);
	return load->ret;
}

int xrl_file_load_finish_list(struct xrl_file_load *load, int *fd,
			      size_t *entries, char *err, size_t len)
{
	int ret;

	if (!load->running || !load->list.active)
		return -EINVAL;
	ret = join(load, err, len);
	*fd = load->list.fd;
	*entries = load->list.entries;
	load->list.fd = -1;
	load->list.active = false;
	return ret;
}

int xrl_file_load_finish(struct xrl_file_load *load,
			 struct xrl_config *config, char *err, size_t len)
{
	int ret;

	if (!load->running || load->list.active)
		return -EINVAL;
	ret = join(load, err, len);
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
	size_t entries;
	char err[8];
	int fd;

	if (load->running && load->list.active &&
	    !xrl_file_load_finish_list(load, &fd, &entries, err, sizeof(err)) &&
	    fd >= 0)
		close(fd);
	if (load->running &&
	    !xrl_file_load_finish(load, &config, err, sizeof(err)))
		xrl_config_free(&config);
	if (load->done_fd >= 0)
		close(load->done_fd);
	load->done_fd = -1;
	free(load->path);
	load->path = NULL;
}
