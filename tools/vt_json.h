/* A minimal JSON writer for the --json outputs (docs/JSON.md). */
#ifndef VT_JSON_H
#define VT_JSON_H

#include <stdint.h>
#include <stdio.h>

void vt_json_str(FILE *f, const char *s);
/* A string, or null for NULL. */
void vt_json_str_or_null(FILE *f, const char *s);
/* A number, or null when v is VT_DF_UNKNOWN. */
void vt_json_u64(FILE *f, uint64_t v);
/* A signed delta, or null when unknown is set. */
void vt_json_i64(FILE *f, int64_t v, int unknown);
/* An array of strings. */
void vt_json_strs(FILE *f, char *const *s, uint32_t n);

#endif
