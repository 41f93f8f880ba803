/* The benchmarks' reading of their own resident memory (KiB; -1 when /proc says nothing). */
#ifndef BENCH_RSS_H
#define BENCH_RSS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline long bench_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            v = atol(line + 6);
    if (f)
        fclose(f);
    return v;
}

#endif
