/* A strict JSON checker (RFC 8259) for the fuzz target: the reports' JSON must parse for every input. */
#ifndef VT_JSON_CHECK_H
#define VT_JSON_CHECK_H

#include <stddef.h>

/* 0 when s[0..n) is one JSON value (with whitespace around it), -1 otherwise. */
int vt_json_check(const char *s, size_t n);

#endif
