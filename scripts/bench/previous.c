// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * previous.c - the driver's side of prevhost.c: starts the host with a
 * pipe each way, takes its program and bucket map fds, asks it for the
 * policies the rows measure.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "common.h"
#include "previous.h"

/* Another process's fd @fd as one of this process, or -errno. */
static int take_fd(int pidfd, int fd)
{
	int ret = syscall(SYS_pidfd_getfd, pidfd, fd, 0);

	return ret < 0 ? -errno : ret;
}

/* Forks the host with its stdin and stdout on pipes. */
static int spawn(struct prev_host *host, const char *path)
{
	int in[2], out[2];

	if (pipe2(in, O_CLOEXEC))
		return -errno;
	if (pipe2(out, O_CLOEXEC)) {
		close(in[0]);
		close(in[1]);
		return -errno;
	}
	host->pid = fork();
	if (host->pid == 0) {
		dup2(in[0], STDIN_FILENO);
		dup2(out[1], STDOUT_FILENO);
		execl(path, path, (char *)NULL);
		fprintf(stderr, "bench: %s: %s\n", path, strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	if (host->pid < 0) {
		close(in[1]);
		close(out[0]);
		return -errno;
	}
	host->to_host = in[1];
	host->from_host = fdopen(out[0], "r");
	return host->from_host ? 0 : -errno;
}

/* Takes the fds the ready line names. */
static int adopt(struct prev_host *host)
{
	int pid, prog, buckets, clockless, pidfd, ret = 0;
	char line[160];

	if (!fgets(line, sizeof(line), host->from_host))
		return -EPIPE;
	if (sscanf(line, "ready %d %d %d %d %47s", &pid, &prog, &buckets,
		   &clockless, host->commit) != 5 ||
	    pid != host->pid)
		return -EPROTO;
	pidfd = syscall(SYS_pidfd_open, host->pid, 0);
	if (pidfd < 0)
		return -errno;
	host->prog_fd = take_fd(pidfd, prog);
	host->buckets_fd = take_fd(pidfd, buckets);
	host->clockless_fd = take_fd(pidfd, clockless);
	if (host->prog_fd < 0 || host->buckets_fd < 0 || host->clockless_fd < 0)
		ret = -EBADF;
	close(pidfd);
	return ret;
}

int prev_host_start(struct prev_host *host, const char *path)
{
	int ret;

	memset(host, 0, sizeof(*host));
	host->prog_fd = host->buckets_fd = host->clockless_fd = -1;
	host->to_host = -1;
	ret = spawn(host, path);
	if (!ret)
		ret = adopt(host);
	if (ret) {
		bench_log("previous data path %s: %s", path, strerror(-ret));
		prev_host_stop(host);
	}
	return ret;
}

/* Sends one command and waits for its answer. */
static int command(struct prev_host *host, const char *fmt, size_t n)
{
	char line[160];
	int len;

	len = snprintf(line, sizeof(line), fmt, n);
	if (write(host->to_host, line, len) != len)
		return -errno;
	if (!fgets(line, sizeof(line), host->from_host))
		return -EPIPE;
	if (!strcmp(line, "ok\n"))
		return 0;
	bench_log("previous data path: %s", line);
	return -EIO;
}

int prev_host_rules(struct prev_host *host, size_t n_rules)
{
	return command(host, "rules %zu\n", n_rules);
}

int prev_host_budget(struct prev_host *host)
{
	return command(host, "budget\n", 0);
}

int prev_host_clockless(struct prev_host *host, size_t n_rules)
{
	return command(host, "clockless %zu\n", n_rules);
}

void prev_host_stop(struct prev_host *host)
{
	if (host->clockless_fd >= 0)
		close(host->clockless_fd);
	if (host->buckets_fd >= 0)
		close(host->buckets_fd);
	if (host->prog_fd >= 0)
		close(host->prog_fd);
	if (host->to_host >= 0)
		close(host->to_host); /* its end of input */
	if (host->from_host)
		fclose(host->from_host);
	if (host->pid > 0)
		waitpid(host->pid, NULL, 0);
	host->pid = 0;
	host->to_host = host->prog_fd = host->buckets_fd = -1;
	host->clockless_fd = -1;
	host->from_host = NULL;
}
