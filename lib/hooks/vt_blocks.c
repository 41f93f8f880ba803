/* The public hooks for native caching allocators (include/vramtrace.h). Each block handed out becomes
 * a table entry of kind "block", keyed apart from the driver allocation it lives in (a segment's first
 * block starts at the segment's own address), labelled with the allocator's name and carrying our own
 * stack. A driver allocation that a block starts at, or that the pool declares, is marked as the pool's
 * segment for its life. The names are kept in a small fixed table: allocators are few. */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "vramtrace.h"
#include "vt_blocks.h"
#include "vt_lock.h"
#include "vt_stack.h"
#include "vt_table.h"
#include "vt_thread.h"
#include "vt_module.h"

#define VT_MAX_OWNERS 32
#define VT_OWNER_LEN 32

static char vt_owners[VT_MAX_OWNERS][VT_OWNER_LEN] = {"other"}; /* 0: the overflow name */
static int vt_nowners = 1;
static pthread_mutex_t vt_owner_lock = PTHREAD_MUTEX_INITIALIZER;

/* The allocator's name as one word of the dump format: printable ASCII but the backslash, which starts an
 * escape in a dump's text (common/vt_text.h). */
static void vt_owner_word(const char *name, char *out)
{
    size_t n = 0;
    for (; name && name[n] && n < VT_OWNER_LEN - 1; n++)
        out[n] = name[n] > ' ' && name[n] < 127 && name[n] != '\\' ? name[n] : '_';
    out[n] = 0;
    if (!n)
        strcpy(out, "native");
}

uint64_t vt_block_owner_of(const char *name)
{
    char w[VT_OWNER_LEN];
    vt_owner_word(name, w);
    vt_mutex_lock(&vt_owner_lock);
    int i;
    for (i = 1; i < vt_nowners && strcmp(vt_owners[i], w); i++)
        ;
    if (i == vt_nowners) {
        if (vt_nowners < VT_MAX_OWNERS)
            strcpy(vt_owners[vt_nowners++], w);
        else
            i = 0;
    }
    vt_mutex_unlock(&vt_owner_lock);
    return (uint64_t)i;
}

/* In a fork child: the names' lock is free again. */
static void vt_blocks_atfork_child(void)
{
    vt_mutex_reset(&vt_owner_lock);
}

const char *vt_block_owner(uint64_t index)
{
    return index < VT_MAX_OWNERS ? vt_owners[index] : vt_owners[0];
}

void vramtrace_block_alloc(const void *ptr, size_t size, int device, const char *allocator)
{
    if (!ptr)
        return;
    int saved = errno;
    vt_activate();
    struct vt_alloc a;
    memset(&a, 0, sizeof a);
    a.addr = (uintptr_t)ptr;
    a.size = size;
    a.kind = VT_KIND_BLOCK;
    a.api = VT_FN_vramtrace_block_alloc;
    a.device = (int16_t)(device >= 0 && device < VT_MAX_DEVICES ? device : -1);
    a.x.owner = vt_block_owner_of(allocator);
    a.stack = vt_stack_capture();
    vt_table_add(&a);
    /* A block at the start of a driver allocation (a pool's first block of a fresh segment): that
     * allocation is the pool's segment from now on, cache once its blocks are all given back. */
    vt_table_set_owner(a.addr, a.x.owner, 0);
    errno = saved;
}

int vramtrace_pool_segment(const void *ptr, const char *allocator)
{
    int saved = errno;
    vt_activate();
    int found = ptr && vt_table_set_owner((uintptr_t)ptr, vt_block_owner_of(allocator), 1);
    errno = saved;
    return found ? 0 : -1;
}

void vramtrace_block_free(const void *ptr)
{
    int saved = errno;
    vt_count_call(VT_FN_vramtrace_block_free);
    if (ptr && !vt_table_remove((uintptr_t)ptr, VT_KIND_BLOCK, NULL))
        vt_count_unknown_free();
    errno = saved;
}

VT_MODULE(blocks, .child = vt_blocks_atfork_child);
