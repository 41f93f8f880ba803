/* Symbolization with libdwfl. Results are cached per PC: a dump has far fewer distinct PCs than
 * frames. A module whose file is missing or whose build-id differs from the dump's (a rebuilt binary)
 * is left out rather than read wrongly.
 *
 * A module's path comes from the dump, so from whoever wrote it: it is opened here, never by libdwfl,
 * with O_NONBLOCK and only when it is a regular file (a FIFO planted at that path would hang the
 * command), and libdwfl is handed the descriptor. Separate debug information is looked for the same
 * way, and only under /usr/lib/debug (by build-id, or by the module's debuglink there), never beside a
 * module in a directory someone else may write; a debug file counts only when its build-id is the
 * module's. Every name that comes out is escaped as a dump's names are (vt_text.h). */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "vt_frame.h"
#include "vt_symbols.h"
#include "vt_symindex.h"
#include "vt_text.h"

/* Built into the command, and also on its own (libvramtrace-symbols.so) for the library's metrics file,
 * inside the program: running out of memory never exits, a PC whose entry could not be kept is named
 * again next time. The command's loaders symbolize on several threads at once: a flag for each. */
static __thread int vt_sym_oom;
#define HASH_NONFATAL_OOM 1
#define uthash_nonfatal_oom(elt) (vt_sym_oom = 1)
#include <uthash.h>

/* From libstdc++: the Itanium C++ ABI demangler, which has a C interface. */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct vt_sym_entry {
    UT_hash_handle hh;
    uint64_t pc;
    char *text; /* NULL: not in any trusted module */
};

struct vt_symbolizer {
    Dwfl *dwfl;
    Dwfl_Module **trusted;
    struct vt_symindex **index; /* each trusted module's symbols by address, made at its first look-up */
    unsigned char *indexed;     /* tried already (index NULL: it could not be made) */
    size_t ntrusted;
    struct vt_sym_entry *cache;
};

/* A descriptor of path when it is a regular file, opened so that nothing at that path can block; -1 else. */
static int vt_open_regular(const char *path)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    struct stat st;
    if (fd >= 0 && (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* fd (taken) when its ELF build-id is bits[0..n), else -1 (closed). */
static int vt_same_build_id(int fd, const unsigned char *bits, int n)
{
    Elf *e = fd >= 0 ? elf_begin(fd, ELF_C_READ_MMAP, NULL) : NULL;
    const void *id;
    ssize_t k = e ? dwelf_elf_gnu_build_id(e, &id) : -1;
    int same = k == n && n > 0 && !memcmp(id, bits, (size_t)n);
    if (e)
        elf_end(e);
    if (!same && fd >= 0)
        close(fd);
    return same ? fd : -1;
}

static int vt_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                             const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
                             char **debuginfo_file_name)
{
    (void)userdata, (void)modname, (void)base, (void)debuglink_crc;
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = dwfl_module_build_id(mod, &bits, &vaddr);
    if (n <= 1)
        return -1;
    char path[PATH_MAX], hex[2 * 64 + 1];
    for (int i = 0; i < n && i < 64; i++)
        snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    snprintf(path, sizeof path, "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
    int fd = vt_same_build_id(vt_open_regular(path), bits, n);
    if (fd < 0 && debuglink_file && file_name && !strchr(debuglink_file, '/')) {
        const char *slash = strrchr(file_name, '/');
        int dl = slash ? (int)(slash - file_name) : 0;
        if (snprintf(path, sizeof path, "/usr/lib/debug%.*s/%s", dl, file_name, debuglink_file) < (int)sizeof path)
            fd = vt_same_build_id(vt_open_regular(path), bits, n);
    }
    if (fd >= 0)
        *debuginfo_file_name = strdup(path);
    return fd;
}

static const Dwfl_Callbacks vt_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = vt_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

static void vt_hex(const unsigned char *b, size_t n, char *out)
{
    static const char hx[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = hx[b[i] >> 4];
        out[2 * i + 1] = hx[b[i] & 15];
    }
    out[2 * n] = 0;
}

struct vt_symbolizer *vt_sym_open(const struct vt_dumpfile *d)
{
    struct vt_symbolizer *s = calloc(1, sizeof *s);
    size_t cap = d->nmodules ? d->nmodules : 1;
    if (!s || !(s->trusted = calloc(cap, sizeof *s->trusted)) || !(s->index = calloc(cap, sizeof *s->index)) ||
        !(s->indexed = calloc(cap, 1)) || !(s->dwfl = dwfl_begin(&vt_callbacks))) {
        if (s) {
            free(s->trusted);
            free(s->index);
            free(s->indexed);
        }
        free(s);
        return NULL;
    }
    dwfl_report_begin(s->dwfl);
    for (size_t i = 0; i < d->nmodules; i++) {
        const struct vt_df_module *m = &d->modules[i];
        char raw[PATH_MAX];
        int fd = -1;
        if (m->path[0] != '/' || !strcmp(m->build_id, "-") || vt_text_unescape(raw, sizeof raw, m->path) < 0 ||
            (fd = vt_open_regular(raw)) < 0)
            continue;
        Dwfl_Module *mod = dwfl_report_elf(s->dwfl, m->path, raw, fd, m->base, false); /* fd consumed on success */
        if (!mod)
            close(fd);
        const unsigned char *bits;
        GElf_Addr vaddr;
        int n = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : -1;
        char hex[2 * 64 + 1];
        if (n > 0 && n <= 64) {
            vt_hex(bits, (size_t)n, hex);
            if (!strcmp(hex, m->build_id))
                s->trusted[s->ntrusted++] = mod;
        }
    }
    dwfl_report_end(s->dwfl, NULL, NULL);
    if (!s->ntrusted) {
        vt_sym_close(s);
        return NULL;
    }
    return s;
}

/* mod's place among the trusted modules, or -1. */
static long vt_trusted(const struct vt_symbolizer *s, Dwfl_Module *mod)
{
    for (size_t i = 0; i < s->ntrusted; i++)
        if (s->trusted[i] == mod)
            return (long)i;
    return -1;
}

/* The name of the symbol at addr in trusted module i: through the module's index (vt_symindex.h), made
 * the first time, else libdwfl's own look-up, which reads the whole symbol table each time. */
static const char *vt_symbol_at(struct vt_symbolizer *s, long i, Dwarf_Addr addr)
{
    if (!s->indexed[i]) {
        s->index[i] = vt_symindex_make(s->trusted[i]);
        s->indexed[i] = 1;
    }
    const char *name;
    if (s->index[i] && vt_symindex_find(s->index[i], addr, &name))
        return name;
    GElf_Off off = 0;
    GElf_Sym sym;
    return dwfl_module_addrinfo(s->trusted[i], addr, &off, &sym, NULL, NULL, NULL);
}

static void vt_append(char **buf, size_t *len, size_t *cap, const char *text)
{
    size_t n = strlen(text);
    if (*len + n + 2 > *cap) {
        size_t nc = (*cap + n + 2) * 2;
        char *nb = realloc(*buf, nc);
        if (!nb)
            return;
        *buf = nb;
        *cap = nc;
    }
    if (*len)
        (*buf)[(*len)++] = '\n';
    memcpy(*buf + *len, text, n + 1);
    *len += n;
}

static const char *vt_base(const char *p)
{
    const char *b = p ? strrchr(p, '/') : NULL;
    return b ? b + 1 : p ? p : "?";
}

char *vt_cxx_demangle(const char *mangled)
{
    int st = -1;
    char *dem = __cxa_demangle(mangled, NULL, NULL, &st);
    if (st == 0 && dem)
        return dem;
    free(dem);
    return NULL;
}

static void vt_frame(char **buf, size_t *len, size_t *cap, const char *name, const char *file, int line)
{
    char *dem = NULL;
    int st = -1;
    if (name && name[0] == '_' && name[1] == 'Z')
        dem = __cxa_demangle(name, NULL, NULL, &st);
    char text[2048];
    if (file && line > 0)
        snprintf(text, sizeof text, VT_FRAME_FMT, st == 0 && dem ? dem : name ? name : "??", vt_base(file), (unsigned)line);
    else
        snprintf(text, sizeof text, "%s", st == 0 && dem ? dem : name ? name : "??");
    free(dem);
    /* Names and file names from the debug information: the module's author's bytes, escaped. */
    char safe[4 * sizeof text];
    vt_text_escape(safe, sizeof safe, text, strlen(text), 0);
    vt_append(buf, len, cap, safe);
}

/* The compile unit holding addr. libdw finds it through .debug_aranges, which clang does not emit;
 * without them, the units' own address ranges are searched. */
static Dwarf_Die *vt_cu_of(Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Addr *bias, Dwarf_Die *out)
{
    Dwarf_Die *cu = dwfl_module_addrdie(mod, addr, bias);
    if (cu)
        return cu;
    Dwarf_Die *c = NULL;
    Dwarf_Addr b = 0;
    while ((c = dwfl_module_nextcu(mod, c, &b))) {
        if (dwarf_haspc(c, addr - b) > 0) {
            *out = *c;
            *bias = b;
            return out;
        }
    }
    return NULL;
}

/* Innermost inlined call first: each inlined subroutine is named at the line inside it, and its caller
 * at the line the call was made from. */
static char *vt_symbolize(struct vt_symbolizer *s, uint64_t pc)
{
    Dwarf_Addr addr = pc - 1; /* a return address: the call is the instruction before it */
    Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, addr);
    long t = mod ? vt_trusted(s, mod) : -1;
    if (t < 0)
        return NULL;
    const char *symname = vt_symbol_at(s, t, addr);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    Dwarf_Addr bias = 0;
    Dwarf_Die cubuf;
    Dwarf_Die *cudie = vt_cu_of(mod, addr, &bias, &cubuf);
    Dwarf_Line *dl = cudie ? dwarf_getsrc_die(cudie, addr - bias) : NULL;
    int line = 0;
    const char *file = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
    if (dl)
        dwarf_lineno(dl, &line);
    Dwarf_Die *scopes = NULL;
    int n = cudie ? dwarf_getscopes(cudie, addr - bias, &scopes) : 0;
    const char *cur_file = file;
    int cur_line = line, named = 0;
    Dwarf_Files *files = NULL;
    if (cudie)
        dwarf_getsrcfiles(cudie, &files, NULL);
    for (int i = 0; i < n; i++) {
        int tag = dwarf_tag(&scopes[i]);
        if (tag != DW_TAG_inlined_subroutine && tag != DW_TAG_subprogram)
            continue;
        Dwarf_Attribute attr;
        const char *name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &attr));
        if (!name)
            name = dwarf_formstring(dwarf_attr_integrate(&scopes[i], DW_AT_MIPS_linkage_name, &attr));
        if (!name)
            name = dwarf_diename(&scopes[i]);
        if (tag == DW_TAG_subprogram) {
            /* The debug info's name, not the symbol's: a compiler's clone (foo.constprop.0) is foo. */
            vt_frame(&buf, &len, &cap, name ? name : symname, cur_file, cur_line);
            named = 1;
            break;
        }
        vt_frame(&buf, &len, &cap, name, cur_file, cur_line);
        Dwarf_Word cf = 0, cl = 0;
        dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &cf);
        dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &cl);
        cur_file = files ? dwarf_filesrc(files, cf, NULL, NULL) : NULL;
        cur_line = (int)cl;
    }
    free(scopes);
    if (!named) {
        if (symname) {
            vt_frame(&buf, &len, &cap, symname, cur_file, cur_line);
        } else {
            char text[600];
            const char *mname = dwfl_module_info(mod, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
            Dwarf_Addr start = 0;
            dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
            snprintf(text, sizeof text, "%s+0x%llx", vt_base(mname), (unsigned long long)(pc - start));
            vt_append(&buf, &len, &cap, text);
        }
    }
    return buf;
}

const char *vt_sym_frames(struct vt_symbolizer *s, uint64_t pc)
{
    struct vt_sym_entry *e;
    HASH_FIND(hh, s->cache, &pc, sizeof pc, e);
    if (e)
        return e->text;
    if (!(e = calloc(1, sizeof *e)))
        return NULL;
    e->pc = pc;
    e->text = vt_symbolize(s, pc);
    vt_sym_oom = 0;
    HASH_ADD(hh, s->cache, pc, sizeof pc, e);
    if (vt_sym_oom) {
        free(e->text);
        free(e);
        return NULL;
    }
    return e->text;
}

void vt_sym_close(struct vt_symbolizer *s)
{
    if (!s)
        return;
    struct vt_sym_entry *e, *tmp;
    HASH_ITER(hh, s->cache, e, tmp) {
        HASH_DEL(s->cache, e);
        free(e->text);
        free(e);
    }
    for (size_t i = 0; i < s->ntrusted; i++)
        vt_symindex_free(s->index[i]);
    if (s->dwfl)
        dwfl_end(s->dwfl);
    free(s->trusted);
    free(s->index);
    free(s->indexed);
    free(s);
}

const struct vt_symbolizer_ops vt_libdw_symbolizer = {vt_sym_open, vt_sym_frames, vt_sym_close};
