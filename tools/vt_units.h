/* Sizes for people: binary units when printing, and SIZE arguments such as 512M or 1.5GiB. */
#ifndef VT_UNITS_H
#define VT_UNITS_H

#include <stddef.h>
#include <stdint.h>

/* "1.5 GiB", "976.6 KiB", "12 B". */
void vt_human(uint64_t bytes, char *out, size_t len);
/* The same with a sign: "+6.0 GiB", "-12 B", "+0 B". */
void vt_human_delta(int64_t bytes, char *out, size_t len);
/* Parses 4096, 64K, 512M, 1.5G, 2GiB, 10MB (all binary); returns 0, or -1 for anything else. */
int vt_parse_size(const char *s, uint64_t *out);

#endif
