// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * notify.c - readiness, reloads and status for systemd (Type=notify).
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-daemon.h>
#include "clock.h"
#include "change.h"
#include "log.h"
#include "notify.h"

void xrl_notify_status_line(const struct xrl_daemon_state *state, char *buf,
			    size_t len)
{
	const struct xrl_reload_result *last = &state->last_reload;
	size_t i, n;
	struct tm tm;
	char stamp[16];

	n = snprintf(buf, len, "%zu rules on ", state->policy.n_rules);
	for (i = 0; i < state->n_interfaces && n < len; i++)
		n += snprintf(buf + n, len - n, "%s%s", i ? ", " : "",
			      state->interfaces[i]);
	if (!state->n_interfaces && n < len)
		n += snprintf(buf + n, len - n, "no interface");
	if (!last->at || n >= len)
		return;
	localtime_r(&last->at, &tm);
	strftime(stamp, sizeof(stamp), "%H:%M:%S", &tm);
	snprintf(buf + n, len - n, "; last reload %s: %s", stamp,
		 last->ok ? "ok" : last->error);
}

/* The status line goes on one line whatever an error holds. */
static void notify(const char *what, const struct xrl_daemon_state *state)
{
	char line[768];
	int ret;

	if (state) {
		xrl_notify_status_line(state, line, sizeof(line));
		line[strcspn(line, "\n")] = '\0';
		ret = sd_notifyf(0, "%sSTATUS=%s", what, line);
	} else {
		ret = sd_notify(0, what);
	}
	if (ret < 0)
		pr_warn("sd_notify: %s", strerror(-ret));
}

void xrl_notify_ready(const struct xrl_daemon_state *state)
{
	notify("READY=1\n", state);
}

/* systemd 253 and later want the monotonic time with RELOADING=1
 * (Type=notify-reload); earlier ones ignore it. */
void xrl_notify_reloading(void)
{
	char msg[64];

	snprintf(msg, sizeof(msg), "RELOADING=1\nMONOTONIC_USEC=%llu",
		 (unsigned long long)(xrl_clock_ns(CLOCK_MONOTONIC) /
				      XRL_NS_PER_US));
	notify(msg, NULL);
}

void xrl_notify_status(const struct xrl_daemon_state *state)
{
	notify("", state);
}

void xrl_notify_stopping(void)
{
	notify("STOPPING=1", NULL);
}
