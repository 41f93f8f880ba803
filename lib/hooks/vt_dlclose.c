/* The dlclose() hook: it tells vt_unload.h which code went away. Before the real call, the object's
 * loaded range is read (dlinfo, then its program headers); after a successful one, if no object is
 * mapped there any more (the count of users reached zero), the range is noted. Everything else is the
 * real dlclose, its result and errno untouched. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <string.h>

#include "vt_unload.h"

struct vt_find {
    uintptr_t base;
    const char *name;
    uintptr_t lo, hi;
    int found;
};

static int vt_find_visit(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct vt_find *f = arg;
    if (info->dlpi_addr != f->base || !info->dlpi_name || strcmp(info->dlpi_name, f->name))
        return 0;
    f->found = 1;
    f->lo = UINTPTR_MAX;
    f->hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        f->lo = lo < f->lo ? lo : f->lo;
        f->hi = hi > f->hi ? hi : f->hi;
    }
    return 1;
}

__attribute__((visibility("default"))) int dlclose(void *handle)
{
    static int (*real)(void *);
    if (!real)
        real = (int (*)(void *))dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.34");
    if (!real)
        real = (int (*)(void *))dlvsym(RTLD_NEXT, "dlclose", "GLIBC_2.2.5");
    if (!real) {
        errno = ENOSYS;
        return -1;
    }
    int saved = errno;
    struct link_map *lm = NULL;
    struct vt_find f = {0};
    /* glibc declares the handle never NULL; a program may pass one all the same. */
    void *volatile h = handle;
    if (h && dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm && lm->l_name && lm->l_name[0]) {
        f.base = lm->l_addr;
        f.name = lm->l_name;
        dl_iterate_phdr(vt_find_visit, &f);
    }
    struct vt_find after = f;
    char name[4096];
    if (f.found && strlen(f.name) < sizeof name) {
        strcpy(name, f.name); /* the link map's own string goes with the object */
        after.name = name;
    }
    errno = saved;
    int r = real(handle);
    int err = errno;
    if (r == 0 && f.found && f.lo < f.hi) {
        after.found = 0;
        dl_iterate_phdr(vt_find_visit, &after);
        if (!after.found)
            vt_unload_note(f.lo, f.hi);
    }
    errno = err;
    return r;
}
