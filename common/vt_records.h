/* The dump's fixed records, each as one list of its fields after its word (docs/FORMAT.md), from which
 * both halves take what they need:
 * - the writer its printf format: VT_REC_FMT(ALLOC) is VT_REC_ALLOC " 0x%llx %llu %s ..." "\n" (records
 *   with an `opt` field, written as '-' when not known, are written a field at a time, in this order);
 * - the reader each field's number: VT_F_ALLOC_SIZE is 2 (the word is 0), VT_F_ALLOC_NF the count with
 *   the word;
 * - the synopsis docs/FORMAT.md gives: VT_REC_DOC(ALLOC) is "alloc 0xADDR SIZE KIND ..." (tests/t_records.c
 *   checks each is there, word for word).
 * X(RECORD, FIELD, TYPE); TYPE: hex (0x%llx), u64 (%llu), opt (%llu, or '-' when not known), int (%d),
 * u32 (%u), long (%ld), ulong (%lu), word (%s: a name, escaped where the program chose it), rest (the rest
 * of the line, spaces and all, escaped: always the last field, written a field at a time). Adding a field:
 * one X here, and the code that fills and uses it. Records of no fixed length (stack, pystack, frame,
 * exe, cmdline, history) are described in docs/FORMAT.md only. */
#ifndef VT_RECORDS_H
#define VT_RECORDS_H

#include "vt_format.h"

/* The header. */
#define VT_FIELDS_PID(X) X(PID, N, long)
#define VT_FIELDS_PPID(X) X(PPID, N, long)
#define VT_FIELDS_REASON(X) X(REASON, R, word)
#define VT_FIELDS_SEQ(X) X(SEQ, N, ulong)
#define VT_FIELDS_TIME(X) X(TIME, WALL, u64) X(TIME, MONO, u64)
#define VT_FIELDS_START(X) X(START, WALL, u64) X(START, MONO, u64)
#define VT_FIELDS_DEPTH(X) X(DEPTH, N, int)

#define VT_FIELDS_COUNTER(X) X(COUNTER, NAME, word) X(COUNTER, VALUE, u64)
#define VT_FIELDS_UNWATCHED(X) X(UNWATCHED, NAME, word) X(UNWATCHED, COUNT, u64)
#define VT_FIELDS_INTERPRETER(X)                                                                                 \
    X(INTERPRETER, VERSION, word) X(INTERPRETER, CAPTURE, word) X(INTERPRETER, LO, hex) X(INTERPRETER, HI, hex)
#define VT_FIELDS_MODULE(X)                                                                                      \
    X(MODULE, IDX, int) X(MODULE, BASE, hex) X(MODULE, LO, hex) X(MODULE, HI, hex) X(MODULE, BUILD_ID, word)     \
    X(MODULE, PATH, rest)
#define VT_FIELDS_PYFRAME(X) X(PYFRAME, ID, u32) X(PYFRAME, LINE, u32) X(PYFRAME, FUNCTION, word) X(PYFRAME, FILE, rest)
#define VT_FIELDS_DEVICE(X)                                                                                      \
    X(DEVICE, ORD, int) X(DEVICE, TOTAL, opt) X(DEVICE, FREE, opt) X(DEVICE, RESERVED, u64)                      \
    X(DEVICE, PEAK, u64) X(DEVICE, PROCESS_USED, opt) X(DEVICE, GRAPH_RESERVED, opt) X(DEVICE, GRAPH_USED, opt)
/* Version 8: each device's peak of reserved memory, when it was (CLOCK_MONOTONIC; '-' when the peak is
 * the dump's own moment), and what was freed since of the memory live at it, by site. */
#define VT_FIELDS_PEAK(X) X(PEAK, DEV, int) X(PEAK, BYTES, u64) X(PEAK, TIME, opt)
#define VT_FIELDS_PEAK_FREED(X)                                                                                  \
    X(PEAK_FREED, DEV, int) X(PEAK_FREED, STACK, u32) X(PEAK_FREED, KIND, word) X(PEAK_FREED, API, word)       \
    X(PEAK_FREED, BYTES, u64)
#define VT_FIELDS_LIMITS(X)                                                                                      \
    X(LIMITS, ORD, int) X(LIMITS, MALLOC_HEAP, opt) X(LIMITS, STACK_PER_THREAD, opt)                             \
    X(LIMITS, RESIDENT_THREADS, opt) X(LIMITS, PRINTF_FIFO, opt)
#define VT_FIELDS_POOL(X)                                                                                        \
    X(POOL, HANDLE, hex) X(POOL, DEV, int) X(POOL, TYPE, word) X(POOL, RESERVED, opt) X(POOL, USED, opt)         \
    X(POOL, RESERVED_HIGH, opt) X(POOL, USED_HIGH, opt) X(POOL, THRESHOLD, opt)
#define VT_FIELDS_API(X)                                                                                         \
    X(API, NAME, word) X(API, CALLS, u64) X(API, ALLOCS, u64) X(API, FREES, u64) X(API, BYTES_ALLOC, u64)        \
    X(API, BYTES_FREED, u64) X(API, FAILED, u64)
#define VT_FIELDS_KIND(X)                                                                                        \
    X(KIND, NAME, word) X(KIND, COUNT, u64) X(KIND, BYTES, u64) X(KIND, ALLOCS, u64) X(KIND, FREES, u64)         \
    X(KIND, BYTES_ALLOC, u64) X(KIND, BYTES_FREED, u64)
#define VT_FIELDS_FAILED(X)                                                                                      \
    X(FAILED, SEQ, u64) X(FAILED, API, word) X(FAILED, SIZE, u64) X(FAILED, DEV, int) X(FAILED, STACK, u32)      \
    X(FAILED, RESULT, int) X(FAILED, COUNT, u64) X(FAILED, FIRST, u64) X(FAILED, LAST, u64) X(FAILED, FREE, opt)
#define VT_FIELDS_ALLOC(X)                                                                                       \
    X(ALLOC, ADDR, hex) X(ALLOC, SIZE, u64) X(ALLOC, KIND, word) X(ALLOC, API, word) X(ALLOC, DEV, int)          \
    X(ALLOC, STREAM, hex) X(ALLOC, POOL, hex) X(ALLOC, HANDLE, hex) X(ALLOC, OFFSET, u64) X(ALLOC, STACK, u32)   \
    X(ALLOC, SEQ, u64) X(ALLOC, TIME, u64) X(ALLOC, TID, int)
#define VT_FIELDS_POOL_SEGMENT(X) X(POOL_SEGMENT, ADDR, hex) X(POOL_SEGMENT, ALLOCATOR, word)
#define VT_FIELDS_PHYS(X)                                                                                        \
    X(PHYS, HANDLE, hex) X(PHYS, SIZE, u64) X(PHYS, KIND, word) X(PHYS, API, word) X(PHYS, DEV, int)             \
    X(PHYS, REFS, int) X(PHYS, MAPS, int) X(PHYS, STACK, u32) X(PHYS, SEQ, u64) X(PHYS, TIME, u64)               \
    X(PHYS, TID, int)
/* Written by the bridges' Python half (lib/bridges/vt_bridge.py), in the same order. */
#define VT_FIELDS_PYTHON(X) X(PYTHON, STATUS, word) X(PYTHON, WAIT_NS, u64) X(PYTHON, RUN_NS, u64) X(PYTHON, DETAIL, rest)
#define VT_FIELDS_BRIDGE(X) X(BRIDGE, NAME, word) X(BRIDGE, STATUS, word) X(BRIDGE, DETAIL, rest)
/* Written by the library after the bridges' records (lib/hooks/vt_torch.c), then torch's segments. */
#define VT_FIELDS_TRACKER(X) X(TRACKER, NAME, word) X(TRACKER, STATE, word) X(TRACKER, DETAIL, rest)
#define VT_FIELDS_RUNNING(X) X(RUNNING, PYSTACK, u32) X(RUNNING, TID, opt) X(RUNNING, AT, opt)
#define VT_FIELDS_ALLOCATOR(X)                                                                                   \
    X(ALLOCATOR, NAME, word) X(ALLOCATOR, DEV, int) X(ALLOCATOR, BACKEND, word) X(ALLOCATOR, ALLOCATED, opt)     \
    X(ALLOCATOR, RESERVED, opt)
#define VT_FIELDS_SEGMENT(X)                                                                                     \
    X(SEGMENT, ADDR, hex) X(SEGMENT, SIZE, u64) X(SEGMENT, DEV, int) X(SEGMENT, ALLOCATOR, word)                 \
    X(SEGMENT, TYPE, word) X(SEGMENT, POOL, word) X(SEGMENT, LAYOUT, word)
#define VT_FIELDS_BLOCK(X)                                                                                       \
    X(BLOCK, ADDR, hex) X(BLOCK, SIZE, u64) X(BLOCK, REQUESTED, u64) X(BLOCK, STATE, word) X(BLOCK, PYSTACK, u32)
#define VT_FIELDS_HELD(X)                                                                                        \
    X(HELD, ALLOCATOR, word) X(HELD, DEV, int) X(HELD, COUNT, u64) X(HELD, BYTES, u64) X(HELD, PYSTACK, u32)

/* Every record with a list, for whoever goes through them all (the synopses' test). */
#define VT_RECORDS(X)                                                                                            \
    X(PID) X(PPID) X(REASON) X(SEQ) X(TIME) X(START) X(DEPTH) X(COUNTER) X(UNWATCHED) X(INTERPRETER) X(MODULE)   \
    X(PYFRAME) X(DEVICE) X(PEAK) X(PEAK_FREED) X(LIMITS) X(POOL) X(API) X(KIND) X(FAILED) X(ALLOC) X(POOL_SEGMENT) X(PHYS)             \
    X(PYTHON) X(BRIDGE) X(TRACKER) X(RUNNING) X(ALLOCATOR) X(SEGMENT) X(BLOCK) X(HELD)

/* Field numbers: VT_F_<RECORD>_<FIELD>, and VT_F_<RECORD>_NF, the record's fields with its word. */
#define VT_F_NUMBER(rec, name, type) VT_F_##rec##_##name,
#define VT_F_ENUM(rec) enum { VT_F_##rec##_WORD, VT_FIELDS_##rec(VT_F_NUMBER) VT_F_##rec##_NF };
VT_RECORDS(VT_F_ENUM)
#undef VT_F_ENUM
#undef VT_F_NUMBER

/* The writer's format of a record, and the synopsis of it that docs/FORMAT.md gives. */
#define VT_FMT_hex "0x%llx"
#define VT_FMT_u64 "%llu"
#define VT_FMT_int "%d"
#define VT_FMT_u32 "%u"
#define VT_FMT_word "%s"
#define VT_FMT_long "%ld"
#define VT_FMT_ulong "%lu"
#define VT_F_FMT(rec, name, type) " " VT_FMT_##type
#define VT_REC_FMT(rec) VT_REC_##rec VT_FIELDS_##rec(VT_F_FMT) "\n"
#define VT_DOC_hex "0x"
#define VT_DOC_u64 ""
#define VT_DOC_opt ""
#define VT_DOC_int ""
#define VT_DOC_u32 ""
#define VT_DOC_word ""
#define VT_DOC_long ""
#define VT_DOC_ulong ""
#define VT_DOC_rest ""
#define VT_F_DOC(rec, name, type) " " VT_DOC_##type #name
#define VT_REC_DOC(rec) VT_REC_##rec VT_FIELDS_##rec(VT_F_DOC)

#endif
