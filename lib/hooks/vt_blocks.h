/* Blocks that native caching allocators report through include/vramtrace.h's hooks. */
#ifndef VT_BLOCKS_H
#define VT_BLOCKS_H

#include <stdint.h>

/* The name an allocator gave, by the index kept in its blocks' handle field. */
const char *vt_block_owner(uint64_t index);
/* The index of an allocator's name (added the first time; 0, "other", when the table is full). */
uint64_t vt_block_owner_of(const char *name);

#endif
