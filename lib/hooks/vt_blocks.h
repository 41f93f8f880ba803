/* Blocks that native caching allocators report through include/vramtrace.h's hooks. */
#ifndef VT_BLOCKS_H
#define VT_BLOCKS_H

#include <stdint.h>

/* The name an allocator gave, by the index kept in its blocks' handle field. */
const char *vt_block_owner(uint64_t index);

#endif
