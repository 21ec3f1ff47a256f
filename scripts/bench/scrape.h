/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * scrape.h - what a /metrics scrape costs: collecting and formatting the
 * counters of a 1,000-rule policy, and counting the bucket map.
 */
#ifndef XRL_BENCH_SCRAPE_H
#define XRL_BENCH_SCRAPE_H

int bench_scrape(int argc, char **argv);

#endif
