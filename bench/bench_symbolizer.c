/* What the metrics file's symbolizer (libvramtrace-symbols.so) costs a process when its frames run through
 * a large shared library stripped to its dynamic symbols, as PyTorch's wheels are: it loads the library
 * (LIB, e.g. Debian's libLLVM), symbolizes N return addresses inside it through the plugin as the
 * library's metrics file does (its ops, its module list from this process), twice with the symbolizer kept
 * open (as the library keeps it between writings), and prints the time of each pass and the resident
 * memory it added.
 *   bench_symbolizer PLUGIN LIB [N]
 * Built and run by hand: cc -O2 -std=c11 -D_GNU_SOURCE -Ianalyze -Icommon -o build/bench_symbolizer
 * bench/bench_symbolizer.c -ldl */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_rss.h"
#include "vt_dumpfile.h"
#include "vt_model.h"

static struct vt_df_module mods[512];
static size_t nmods;

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

/* Each loaded module with its path, load base and GNU build-id in hex, as a dump's module map has them. */
static int add_module(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size, (void)arg;
    if (!info->dlpi_name || info->dlpi_name[0] != '/' || nmods == sizeof mods / sizeof mods[0])
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_NOTE)
            continue;
        const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
        while (p + sizeof(ElfW(Nhdr)) <= end) {
            const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
            const char *name = p + sizeof *n;
            const unsigned char *desc = (const unsigned char *)name + ((n->n_namesz + 3) & ~3u);
            if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 && !memcmp(name, "GNU", 4) && n->n_descsz <= 64) {
                struct vt_df_module *m = &mods[nmods++];
                m->base = info->dlpi_addr;
                m->path = strdup(info->dlpi_name);
                for (unsigned k = 0; k < n->n_descsz; k++)
                    snprintf(m->build_id + 2 * k, 3, "%02x", desc[k]);
                return 0;
            }
            p = (const char *)desc + ((n->n_descsz + 3) & ~3u);
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: bench_symbolizer PLUGIN LIB [N]\n");
        return 2;
    }
    int n = argc > 3 ? atoi(argv[3]) : 200;
    void *plug = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL), *lib = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
    const struct vt_symbolizer_ops *ops = plug ? dlsym(plug, VT_SYMBOLIZER_OPS) : NULL;
    if (!ops || !lib) {
        fprintf(stderr, "bench_symbolizer: %s\n", dlerror());
        return 1;
    }
    /* Return addresses inside LIB: its exported functions' entries, one past each. */
    Dl_info di;
    void *any = dlsym(lib, "LLVMContextCreate");
    if (!any || !dladdr(any, &di)) {
        fprintf(stderr, "bench_symbolizer: no LLVMContextCreate in %s\n", argv[2]);
        return 1;
    }
    dl_iterate_phdr(add_module, NULL);
    struct vt_dumpfile d;
    memset(&d, 0, sizeof d);
    d.modules = mods;
    d.nmodules = nmods;
    static const char *names[] = {"LLVMContextCreate", "LLVMModuleCreateWithName", "LLVMAddFunction", "LLVMBuildAdd",
                                  "LLVMConstInt", "LLVMInt32Type", "LLVMDisposeModule", "LLVMGetNamedFunction"};
    long r0 = bench_rss_kib();
    double t0 = now_ms();
    struct vt_symbolizer *s = ops->open(&d);
    printf("%zu modules opened in %.1f ms; RSS +%ld KiB\n", nmods, now_ms() - t0, bench_rss_kib() - r0);
    /* The first writing names every address (libdw reads the module's symbols); the next finds each in
     * the symbolizer kept open (the library keeps it from one writing to the next). */
    for (int pass = 1; pass <= 2; pass++) {
        t0 = now_ms();
        int named = 0;
        for (int i = 0; i < n; i++) {
            char *f = dlsym(lib, names[i % 8]);
            named += s && f && ops->frames(s, (uint64_t)(uintptr_t)(f + 1 + i / 8)) != NULL;
        }
        printf("pass %d: %d of %d return addresses in %s named, %.1f ms; RSS +%ld KiB\n", pass, named, n, argv[2],
               now_ms() - t0, bench_rss_kib() - r0);
    }
    if (s)
        ops->close(s);
    printf("closed: RSS +%ld KiB\n", bench_rss_kib() - r0);
    return 0;
}
