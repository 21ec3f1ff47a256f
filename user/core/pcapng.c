// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * pcapng.c - the blocks of a pcapng file (pcapng.h), in the host's byte
 * order, which the section header's magic tells readers.
 */
#include <errno.h>
#include <string.h>
#include "pcapng.h"

#define BLOCK_SHB	0x0a0d0d0aU
#define BLOCK_IDB	0x00000001U
#define BLOCK_EPB	0x00000006U
#define BYTE_ORDER_MAGIC 0x1a2b3c4dU
#define LINKTYPE_ETHERNET 1
#define OPT_END		0
#define OPT_COMMENT	1
#define OPT_IF_NAME	2
#define OPT_IF_TSRESOL	9
#define TSRESOL_NS	9	/* 10^-9 s */

static uint32_t padded(uint32_t len)
{
	return (len + 3) & ~3U;
}

static int put(FILE *out, const void *data, size_t len)
{
	static const uint8_t zeros[4];

	if (len && fwrite(data, 1, len, out) != len)
		return -EIO;
	/* Every field is padded to 32 bits. */
	len = padded((uint32_t)len) - len;
	return len && fwrite(zeros, 1, len, out) != len ? -EIO : 0;
}

static int put32(FILE *out, uint32_t word)
{
	return put(out, &word, sizeof(word));
}

/* An option's header and value; its size in the block: padded_option(). */
static int put_option(FILE *out, uint16_t code, const void *value,
		      uint16_t len)
{
	uint16_t head[2] = { code, len };
	int ret = put(out, head, sizeof(head));

	return ret ? ret : put(out, value, len);
}

static uint32_t option_size(size_t len)
{
	return 4 + padded((uint32_t)len);
}

/* Options longer than this are cut: an option's length is 16 bits. */
#define OPTION_MAX	0xfff0

int xrl_pcapng_begin(FILE *out, const char *ifname, uint32_t snaplen)
{
	uint16_t name_len = (uint16_t)strnlen(ifname, 64);
	uint8_t tsresol = TSRESOL_NS;
	uint32_t shb_len = 28, idb_len;
	uint16_t idb_head[2] = { LINKTYPE_ETHERNET, 0 };
	uint16_t version[2] = { 1, 0 };
	int64_t section_len = -1;	/* not given */
	int ret;

	ret = put32(out, BLOCK_SHB);
	ret = ret ?: put32(out, shb_len);
	ret = ret ?: put32(out, BYTE_ORDER_MAGIC);
	ret = ret ?: put(out, version, sizeof(version));
	ret = ret ?: put(out, &section_len, sizeof(section_len));
	ret = ret ?: put32(out, shb_len);

	idb_len = 20 + option_size(name_len) + option_size(1) + 4;
	ret = ret ?: put32(out, BLOCK_IDB);
	ret = ret ?: put32(out, idb_len);
	ret = ret ?: put(out, idb_head, sizeof(idb_head));
	ret = ret ?: put32(out, snaplen);
	ret = ret ?: put_option(out, OPT_IF_NAME, ifname, name_len);
	ret = ret ?: put_option(out, OPT_IF_TSRESOL, &tsresol, 1);
	ret = ret ?: put_option(out, OPT_END, NULL, 0);
	ret = ret ?: put32(out, idb_len);
	return ret;
}

int xrl_pcapng_frame(FILE *out, uint64_t unix_ns, const void *data,
		     uint32_t cap_len, uint32_t frame_len,
		     const char *comment)
{
	size_t comment_len = comment ? strnlen(comment, OPTION_MAX) : 0;
	uint32_t len = 32 + padded(cap_len) + 4;
	int ret;

	if (comment_len)
		len += option_size(comment_len);
	ret = put32(out, BLOCK_EPB);
	ret = ret ?: put32(out, len);
	ret = ret ?: put32(out, 0);		/* the one interface */
	ret = ret ?: put32(out, (uint32_t)(unix_ns >> 32));
	ret = ret ?: put32(out, (uint32_t)unix_ns);
	ret = ret ?: put32(out, cap_len);
	ret = ret ?: put32(out, frame_len);
	ret = ret ?: put(out, data, cap_len);
	if (comment_len)
		ret = ret ?: put_option(out, OPT_COMMENT, comment,
					(uint16_t)comment_len);
	ret = ret ?: put_option(out, OPT_END, NULL, 0);
	ret = ret ?: put32(out, len);
	return ret;
}
