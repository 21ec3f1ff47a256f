// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * blocklist.c - the policy's blocklists: and the list files they name
 * (blocklist.h). A list file is a stranger's text: every line is bounded
 * (XRL_BLOCKLIST_LINE_MAX), every byte judged, the entries capped, and
 * the first bad line refuses the whole file.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "blocklist.h"
#include "cidr.h"
#include "fields.h"

const struct xrl_blocklist_spec *
xrl_blocklist_find(const struct xrl_policy *policy, const char *name)
{
	size_t i;

	for (i = 0; i < policy->n_blocklists; i++)
		if (!strcmp(policy->blocklists[i].name, name))
			return &policy->blocklists[i];
	return NULL;
}

/* ---- a list file ---------------------------------------------------- */

/* One line of a list file, its comment cut off. */
struct list_line {
	char text[XRL_BLOCKLIST_LINE_MAX + 1];
	size_t len;
	bool too_long;
	int bad_byte;		/* the first byte that is not text, or -1 */
};

/* Reads a line of @in into @l, whatever its length (what is past the
 * bound is counted, not kept). False at the end of the file. */
static bool read_line(FILE *in, struct list_line *l)
{
	bool comment = false, any = false;
	int c;

	l->len = 0;
	l->too_long = false;
	l->bad_byte = -1;
	while ((c = getc_unlocked(in)) != EOF) {
		any = true;
		if (c == '\n')
			break;
		if (c == '#')
			comment = true;
		if (comment)
			continue;
		if (l->bad_byte < 0 && c != '\t' && c != '\r' &&
		    (c < 0x20 || c > 0x7e))
			l->bad_byte = c;
		if (l->len == XRL_BLOCKLIST_LINE_MAX)
			l->too_long = true;
		else
			l->text[l->len++] = (char)c;
	}
	l->text[l->len] = '\0';
	return any;
}

/* The line without the blanks around it, in place. */
static char *trimmed(char *text)
{
	char *end = text + strlen(text);

	while (*text == ' ' || *text == '\t' || *text == '\r')
		text++;
	while (end > text && (end[-1] == ' ' || end[-1] == '\t' ||
			      end[-1] == '\r'))
		*--end = '\0';
	return text;
}

/* @text quoted for a refusal: printable, at most 48 characters. */
static const char *quoted(char *buf, size_t size, const char *text)
{
	size_t n = 0, i;

	for (i = 0; text[i] && n + 8 < size; i++) {
		if (i == 48) {
			n += (size_t)snprintf(buf + n, size - n, "...");
			break;
		}
		n += (size_t)snprintf(buf + n, size - n,
				      isprint((unsigned char)text[i]) &&
				      text[i] != '"' && text[i] != '\\' ?
				      "%c" : "\\x%02x",
				      (unsigned char)text[i]);
	}
	buf[n < size ? n : size - 1] = '\0';
	return buf;
}

/* @key with its host bits cleared, as text: what a line meant. */
static void network_of(const struct xrl_lpm_key *key, char *buf, size_t len)
{
	struct xrl_lpm_key net = *key;
	__u32 bit;

	for (bit = key->prefixlen; bit < 128; bit++)
		net.addr[bit / 8] &= (__u8)~(0x80 >> (bit % 8));
	xrl_cidr_format(&net, buf, len);
}

/* Why xrl_cidr_parse() refused @text with @ret, in @why. */
static void cidr_refusal(const char *text, int ret, char *why, size_t len)
{
	const char *slash = strchr(text, '/');
	bool ipv6 = slash ? memchr(text, ':', (size_t)(slash - text)) != NULL :
			    strchr(text, ':') != NULL;
	struct xrl_lpm_key key;
	char net[64];
	size_t i;

	if (ret == -EADDRNOTAVAIL) {
		/* Parse it again at the full length for the address. */
		memset(&key, 0, sizeof(key));
		snprintf(net, sizeof(net), "%.*s", (int)(slash - text), text);
		if (!xrl_cidr_parse(net, &key)) {
			key.prefixlen = (__u32)strtoul(slash + 1, NULL, 10) +
					(ipv6 ? 0 : 96);
			network_of(&key, net, sizeof(net));
			snprintf(why, len, "host bits set after the prefix "
				 "length (%s?)", net);
			return;
		}
	}
	if (ret == -ERANGE && slash) {
		for (i = 1; isdigit((unsigned char)slash[i]); i++)
			;
		if (i > 1 && !slash[i]) {
			snprintf(why, len, "prefix longer than %d",
				 ipv6 ? 128 : 32);
			return;
		}
		snprintf(why, len, "prefix length not a number of 0 to %d",
			 ipv6 ? 128 : 32);
		return;
	}
	snprintf(why, len, "not an IPv4 or IPv6 address or CIDR");
}

/* The refusal of line @line: "NAME:LINE: \"TEXT\": why". */
static int refuse_line(const char *name, size_t line, const char *text,
		       const char *why, char *err, size_t len)
{
	char shown[256];

	snprintf(err, len, "%s:%zu: \"%s\": %s", name, line,
		 quoted(shown, sizeof(shown), text), why);
	return -EINVAL;
}

static int compare_keys(const void *a, const void *b)
{
	const struct xrl_lpm_key *ka = a, *kb = b;
	int c = memcmp(ka->addr, kb->addr, sizeof(ka->addr));

	if (c)
		return c;
	return ka->prefixlen < kb->prefixlen ? -1 :
	       ka->prefixlen > kb->prefixlen;
}

/* Whether @e's keys are sorted already, each once (feeds usually are). */
static bool sorted_unique(const struct xrl_blocklist_entries *e)
{
	size_t i;

	for (i = 1; i < e->n; i++)
		if (compare_keys(&e->keys[i - 1], &e->keys[i]) >= 0)
			return false;
	return true;
}

/* Sorts @e's keys and keeps each once: the trie is sized to them. */
static void sort_unique(struct xrl_blocklist_entries *e)
{
	size_t i, n = 0;

	if (!e->n || sorted_unique(e))
		return;
	qsort(e->keys, e->n, sizeof(*e->keys), compare_keys);
	for (i = 1; i < e->n; i++)
		if (compare_keys(&e->keys[n], &e->keys[i]))
			e->keys[++n] = e->keys[i];
	e->n = n + 1;
}

/* Room for one more key, growing by doubling up to @max. */
static int grow(struct xrl_blocklist_entries *e, size_t *cap, size_t max)
{
	struct xrl_lpm_key *grown;
	size_t next;

	if (e->n < *cap)
		return 0;
	next = *cap ? *cap * 2 : 4096;
	if (next > max)
		next = max;
	grown = reallocarray(e->keys, next, sizeof(*grown));
	if (!grown)
		return -ENOMEM;
	e->keys = grown;
	*cap = next;
	return 0;
}

/* One line's entry, if it has one, appended to @e. */
static int read_entry(struct list_line *l, const char *name, size_t line,
		      size_t max, struct xrl_blocklist_entries *e, size_t *cap,
		      char *err, size_t len)
{
	char why[128], *text;
	int ret;

	if (l->bad_byte >= 0) {
		snprintf(why, sizeof(why), "not text (byte 0x%02x)",
			 l->bad_byte);
		return refuse_line(name, line, l->text, why, err, len);
	}
	if (l->too_long)
		return refuse_line(name, line, l->text, "line longer than "
				   "255 bytes", err, len);
	text = trimmed(l->text);
	if (!*text)
		return 0;
	if (e->n == max) {
		snprintf(why, sizeof(why), "more than %zu entries", max);
		return refuse_line(name, line, text, why, err, len);
	}
	ret = grow(e, cap, max);
	if (ret) {
		snprintf(err, len, "%s:%zu: out of memory", name, line);
		return ret;
	}
	ret = xrl_cidr_parse(text, &e->keys[e->n]);
	if (ret) {
		cidr_refusal(text, ret, why, sizeof(why));
		return refuse_line(name, line, text, why, err, len);
	}
	e->n++;
	return 0;
}

int xrl_blocklist_read(FILE *in, const char *name, size_t max,
		       struct xrl_blocklist_entries *out, char *err,
		       size_t len)
{
	struct xrl_blocklist_entries e = {};
	struct list_line l;
	size_t line = 0, cap = 0;
	int ret = 0;

	memset(out, 0, sizeof(*out));
	while (!ret && read_line(in, &l))
		ret = read_entry(&l, name, ++line, max, &e, &cap, err, len);
	if (!ret && ferror(in)) {
		ret = -EIO;
		snprintf(err, len, "%s:%zu: read error", name, line);
	}
	if (ret) {
		xrl_blocklist_entries_free(&e);
		return ret;
	}
	e.lines = e.n;
	sort_unique(&e);
	*out = e;
	return 0;
}

int xrl_blocklist_load(const char *path, size_t max,
		       struct xrl_blocklist_entries *out, char *err,
		       size_t len)
{
	struct stat st;
	FILE *in;
	int fd, ret;

	memset(out, 0, sizeof(*out));
	/* Opened without waiting (a FIFO's open waits for a writer), and
	 * read only if a regular file: a FIFO or a device would keep the
	 * reader waiting forever or reading without end. */
	fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		ret = -errno;
		snprintf(err, len, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    fcntl(fd, F_SETFL, O_RDONLY) || !(in = fdopen(fd, "r"))) {
		snprintf(err, len, "%s: not a regular file", path);
		close(fd);
		return -EINVAL;
	}
	ret = xrl_blocklist_read(in, path, max, out, err, len);
	fclose(in);
	return ret;
}

void xrl_blocklist_entries_free(struct xrl_blocklist_entries *e)
{
	free(e->keys);
	memset(e, 0, sizeof(*e));
}

int xrl_blocklists_check(const struct xrl_policy *policy, char *err,
			 size_t len)
{
	struct xrl_blocklist_entries e;
	char why[768];
	size_t i;
	int ret;

	for (i = 0; i < policy->n_blocklists; i++) {
		ret = xrl_blocklist_load(policy->blocklists[i].file,
					 XRL_BLOCKLIST_ENTRIES, &e, why,
					 sizeof(why));
		if (ret) {
			snprintf(err, len, "blocklists: %s: %s",
				 policy->blocklists[i].name, why);
			return ret;
		}
		xrl_blocklist_entries_free(&e);
	}
	return 0;
}

/* ---- the policy's blocklists: --------------------------------------- */

static bool valid_name(const char *name)
{
	size_t len = strlen(name);

	if (!len || len >= XRL_BLOCKLIST_NAME_MAX)
		return false;
	return strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_-") == len;
}

/* name: and file: (TEXT), and action: (a WORD, fields.c). */
static int read_list_key(struct xrl_yaml *y, const char *field,
			 yaml_node_t *value, const struct xrl_field *f,
			 void *target)
{
	struct xrl_blocklist_spec *spec = target;
	const char *text;
	char why[256];
	int ret = xrl_yaml_scalar(y, field, value, &text);

	if (ret)
		return ret;
	if (f->type == XRL_FIELD_WORD) {
		if (xrl_field_parse(f, text, spec, XRL_STYLE_FILE, why,
				    sizeof(why)))
			return xrl_yaml_fail(y, value, field, value, "%s",
					     why);
		return 0;
	}
	if (!strcmp(f->key, "name")) {
		if (!valid_name(text))
			return xrl_yaml_fail(y, value, field, value,
				"1 to 31 of a-z, 0-9, _ and -");
		strcpy(spec->name, text);
		return 0;
	}
	if (text[0] != '/' || strlen(text) >= sizeof(spec->file))
		return xrl_yaml_fail(y, value, field, value,
				     "an absolute path of at most %zu bytes",
				     sizeof(spec->file) - 1);
	strcpy(spec->file, text);
	return 0;
}

/* One {name, file, action} of the list; both name: and file: needed. */
static int read_list(struct xrl_yaml *y, const char *field,
		     yaml_node_t *node, const struct xrl_field *f,
		     struct xrl_policy *policy)
{
	struct xrl_blocklist_spec spec = { .action = XRL_BLOCKLIST_DENY };
	int ret;

	ret = xrl_yaml_walk(y, field, node, f->sub, f->n_sub, 0,
			    read_list_key, &spec, NULL);
	if (ret)
		return ret;
	if (!spec.name[0] || !spec.file[0])
		return xrl_yaml_fail(y, node, field, NULL,
				     "needs a name: and a file:");
	if (xrl_blocklist_find(policy, spec.name))
		return xrl_yaml_fail(y, node, field, NULL,
				     "a second list named %s", spec.name);
	if (policy->n_blocklists == XRL_BLOCKLISTS_MAX)
		return xrl_yaml_fail(y, node, field, NULL,
				     "more than %d lists", XRL_BLOCKLISTS_MAX);
	spec.line = xrl_yaml_line(node);
	policy->blocklists[policy->n_blocklists++] = spec;
	return 0;
}

int xrl_blocklists_read_yaml(struct xrl_yaml *y, const char *field,
			     yaml_node_t *value, const struct xrl_field *f,
			     void *target)
{
	struct xrl_policy *policy = target;
	char item_field[XRL_YAML_FIELD_MAX];
	size_t i, n;
	int ret;

	ret = xrl_yaml_expect(y, field, value, YAML_SEQUENCE_NODE);
	if (ret)
		return ret;
	n = xrl_yaml_count(value);
	for (i = 0; i < n; i++) {
		snprintf(item_field, sizeof(item_field), "%s[%zu]", field, i);
		ret = read_list(y, item_field, xrl_yaml_item(y, value, i), f,
				policy);
		if (ret)
			return ret;
	}
	policy->blocklists_read = true;
	return 0;
}
