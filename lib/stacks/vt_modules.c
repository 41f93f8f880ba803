/* Module map from dl_iterate_phdr. The build-id is read from the object's own PT_NOTE segment in
 * memory, so no file is opened and nothing is parsed from disk inside the program. */
#include <dlfcn.h>
#include <elf.h>
#include <limits.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "vt_format.h"
#include "vt_modules.h"

struct vt_code_search {
    uintptr_t addr, lo, hi;
};

/* The module is found by its segments, not by dladdr's base, which differs from the load bias that
 * dl_iterate_phdr gives for an executable that is not position-independent. */
static int vt_code_visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct vt_code_search *s = data;
    int mine = 0;
    for (int i = 0; i < info->dlpi_phnum && !mine; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        mine = ph->p_type == PT_LOAD && s->addr >= lo && s->addr < lo + ph->p_memsz;
    }
    if (!mine)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (!s->lo || lo < s->lo)
            s->lo = lo;
        if (hi > s->hi)
            s->hi = hi;
    }
    return 1;
}

void vt_modules_code_range(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
    struct vt_code_search s = {(uintptr_t)addr, 0, 0};
    if (addr)
        dl_iterate_phdr(vt_code_visit, &s);
    *lo = s.lo;
    *hi = s.hi;
}

static void vt_build_id(const struct dl_phdr_info *info, char *out, size_t outlen)
{
    strcpy(out, "-");
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const unsigned char *p = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
        const unsigned char *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
            const unsigned char *name = p + sizeof *nh;
            const unsigned char *desc = name + ((nh->n_namesz + 3) & ~3u);
            const unsigned char *next = desc + ((nh->n_descsz + 3) & ~3u);
            if (next > end)
                break;
            if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(name, "GNU", 4) &&
                nh->n_descsz * 2 + 1 <= outlen) {
                static const char hex[] = "0123456789abcdef";
                for (unsigned j = 0; j < nh->n_descsz; j++) {
                    out[2 * j] = hex[desc[j] >> 4];
                    out[2 * j + 1] = hex[desc[j] & 15];
                }
                out[2 * nh->n_descsz] = 0;
                return;
            }
            p = next;
        }
    }
}

struct vt_mod_write {
    struct vt_out *f;
    int index;
};

static int vt_mod_visit(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct vt_mod_write *w = data;
    uintptr_t lo = 0, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t a = info->dlpi_addr + ph->p_vaddr, b = a + ph->p_memsz;
        if (!lo || a < lo)
            lo = a;
        if (b > hi)
            hi = b;
    }
    if (!hi)
        return 0;
    char path[PATH_MAX];
    const char *name = info->dlpi_name;
    if (!name || !*name) {
        if (w->index != 0)
            return 0; /* the vDSO and other nameless objects have no file to symbolize from */
        ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
        path[n > 0 ? n : 0] = 0;
        name = n > 0 ? path : "-";
    }
    char bid[2 * 64 + 1];
    vt_build_id(info, bid, sizeof bid);
    vt_outf(w->f, VT_REC_MODULE " %d 0x%lx 0x%lx 0x%lx %s ", w->index, (unsigned long)info->dlpi_addr,
            (unsigned long)lo, (unsigned long)hi, bid);
    vt_out_text(w->f, name, 0);
    vt_outs(w->f, "\n");
    w->index++;
    return 0;
}

int vt_modules_write(struct vt_out *f)
{
    struct vt_mod_write w = {f, 0};
    dl_iterate_phdr(vt_mod_visit, &w);
    return f->err ? -1 : 0;
}
