// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * control_blocklists.c - blocklist.reload: one list of the policy in
 * force read from its file again and swapped in alone (blocklists.h), the
 * rest of the policy untouched. The file is read and its trie built off
 * the control loop (file_load.h), as a reload's file; the answer comes
 * once the trie is in force, or with the file's refusal, the list in
 * force kept.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>
#include <jansson.h>
#include "blocklist.h"
#include "blocklists.h"
#include "control_cmds.h"
#include "datapath.h"
#include "file_load.h"
#include "log.h"
#include "pin.h"
#include "rule_json.h"

/* The index of the list @name in the policy in force, or -ENOENT. */
static int list_index(struct xrl_request *req, const char *name)
{
	const struct xrl_policy *policy = &req->state->policy;
	const struct xrl_blocklist_spec *spec;

	spec = xrl_blocklist_find(policy, name);
	if (spec)
		return (int)(spec - policy->blocklists);
	snprintf(req->err, sizeof(req->err), "no blocklist named %.32s in "
		 "the policy in force", name);
	return -ENOENT;
}

/* The trie @fd put in force as list @name, under the pin directory's
 * lock (the policy in force is shared with attach). Closes @fd. */
static int swap_in(struct xrl_request *req, const char *name, int fd,
		   size_t entries)
{
	struct xrl_daemon_state *state = req->state;
	const struct xrl_blocklist_spec *spec;
	char why[256];
	int index, ret;

	index = list_index(req, name);
	ret = index < 0 ? index : xrl_daemon_check_in_force(state, req->err,
							   sizeof(req->err));
	if (ret)
		goto close_fd;
	spec = &state->policy.blocklists[index];
	if (state->lock)
		flock(state->lock->fd, LOCK_EX);
	ret = xrl_blocklist_swap(state->dp, (size_t)index, fd, why,
				 sizeof(why));
	if (state->lock)
		flock(state->lock->fd, LOCK_UN);
	if (ret) {
		snprintf(req->err, sizeof(req->err), "blocklist %s: %.440s", name,
			 why);
		goto close_fd;
	}
	pr_info("blocklist %s: %zu entries from %s in force", name, entries,
		spec->file);
	json_object_set_new(req->response, "name", json_string(name));
	json_object_set_new(req->response, "file", json_string(spec->file));
	json_object_set_new(req->response, "entries",
			    json_integer((json_int_t)entries));
close_fd:
	if (fd >= 0)
		close(fd);
	return ret;
}

/* The file's refusal @why, as the answer: the list in force stays. */
static int refuse_file(struct xrl_request *req, const char *name,
		       const char *why, int ret)
{
	snprintf(req->err, sizeof(req->err), "blocklist %s: %.440s", name,
		 why);
	return ret;
}

int xrl_control_blocklist_reload(struct xrl_request *req)
{
	struct xrl_daemon_state *state = req->state;
	const struct xrl_blocklist_spec *spec;
	const char *name;
	size_t entries;
	char why[768];
	int index, ret, fd;

	ret = xrl_json_string(req->json, "name", true, &name, req->err,
			      sizeof(req->err));
	if (ret)
		return ret;
	if (!state->dp) {
		snprintf(req->err, sizeof(req->err), "no data path");
		return -ENODEV;
	}
	index = list_index(req, name);
	if (index < 0)
		return index;
	spec = &state->policy.blocklists[index];
	if (state->load) {
		ret = xrl_file_load_start_list(state->load, spec);
		if (ret == -EBUSY)
			snprintf(req->err, sizeof(req->err), "a reload of %s is "
				 "in progress; ask again when it ends",
				 state->load->path);
		else if (ret)
			snprintf(req->err, sizeof(req->err), "blocklist %s: "
				 "reading it: %s", name, strerror(-ret));
		return ret ? ret : XRL_REQUEST_LATER;
	}
	ret = xrl_blocklist_build(spec, &fd, &entries, why, sizeof(why));
	return ret ? refuse_file(req, name, why, ret) :
		     swap_in(req, name, fd, entries);
}

int xrl_control_blocklist_done(struct xrl_request *req)
{
	struct xrl_file_load *load = req->state->load;
	char name[XRL_BLOCKLIST_NAME_MAX], why[768];
	size_t entries;
	int fd, ret;

	snprintf(name, sizeof(name), "%s", load->list.spec.name);
	ret = xrl_file_load_finish_list(load, &fd, &entries, why, sizeof(why));
	return ret ? refuse_file(req, name, why, ret) :
		     swap_in(req, name, fd, entries);
}
