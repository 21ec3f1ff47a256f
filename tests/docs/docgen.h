/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * docgen.h - the parts of the docs made from the code's own tables: the
 * policy keys (user/core/fields.c), both programs' options (their option
 * tables), the verdicts (user/core/counters.c) and the pins
 * (user/datapath/loader.c). Each part sits in its file between
 *
 *   <comment> generated: NAME (make docs)
 *   <comment> end generated
 *
 * lines; tests/docs compares them with what the tables make now, and
 * `make docs` writes them.
 */
#ifndef XRL_TEST_DOCGEN_H
#define XRL_TEST_DOCGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct xrl_doc_part {
	const char *path;		/* from the top of the tree */
	const char *name;		/* of the part, in its marker */
	const char *comment;		/* the file's line comment */
	void (*make)(FILE *out);	/* the part's text */
};

/* Every generated part of the docs, ending with one of no path. */
extern const struct xrl_doc_part xrl_doc_parts[];

/*
 * The text of @part in its file (@file_text, malloc()ed, or NULL when the
 * markers are missing) and as the tables make it (@made). 0, or -errno
 * with the reason in @err.
 */
int xrl_doc_part_read(const struct xrl_doc_part *part, char **file_text,
		      char **made, char *err, size_t len);

/* Writes @part's text as the tables make it into its file. 0 or -errno. */
int xrl_doc_part_write(const struct xrl_doc_part *part, char *err,
		       size_t len);

/* The whole of a file (free() it), or NULL. */
char *xrl_doc_slurp(const char *path);

#endif
