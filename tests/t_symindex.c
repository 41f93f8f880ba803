/* TAP: the symbol index (tools/vt_symindex.c) gives libdwfl's own answer. For real libraries of this
 * machine, large and small (libLLVM's 45,000 dynamic symbols where clang is installed, libstdc++, libc,
 * libelf, the command itself with its full symbol table), about a thousand functions of each: the start,
 * one past it, the middle, the last byte and the end of each are looked up both ways, and the answers
 * compared name for name; the index must answer (not hand back to libdwfl) for 9 in 10 at least (on
 * the command's own full table it hands back about 1 in 20: where symbols without a size lie past the
 * sized ones before them). */
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "vt_symindex.h"

static const Dwfl_Callbacks callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

/* path's index against libdwfl: two TAP lines. */
static void check_library(const char *path, int min_symbols)
{
    if (access(path, R_OK) != 0) {
        skip("%s: not on this machine", path);
        skip("%s: not on this machine", path);
        return;
    }
    Dwfl *dwfl = dwfl_begin(&callbacks);
    dwfl_report_begin(dwfl);
    Dwfl_Module *mod = dwfl_report_offline(dwfl, path, path, -1);
    dwfl_report_end(dwfl, NULL, NULL);
    struct vt_symindex *x = mod ? vt_symindex_make(mod) : NULL;
    int n = mod ? dwfl_module_getsymtab(mod) : -1;
    if (!ok(x && n >= min_symbols, "%s: indexed (%d symbols, at least %d)", path, n, min_symbols)) {
        vt_symindex_free(x);
        dwfl_end(dwfl);
        skip("%s: no index to compare", path);
        return;
    }
    long looked = 0, asked = 0, differ = 0;
    char first[512] = "";
    /* Functions (what return addresses are in), about 1,000 of each library: libdwfl reads its whole
     * table at every look-up, ~1 ms each in libLLVM. */
    int every = n / 1000 > 1 ? n / 1000 : 1;
    for (int i = 1; i < n; i += every) {
        GElf_Sym sym;
        GElf_Addr value;
        if (!dwfl_module_getsym_info(mod, i, &sym, &value, NULL, NULL, NULL) || !value ||
            GELF_ST_TYPE(sym.st_info) != STT_FUNC)
            continue;
        uint64_t at[5] = {value, value + 1, value + sym.st_size / 2, value + (sym.st_size ? sym.st_size - 1 : 0),
                          value + sym.st_size};
        for (int k = 0; k < 5; k++) {
            GElf_Off off;
            GElf_Sym s2;
            const char *want = dwfl_module_addrinfo(mod, at[k], &off, &s2, NULL, NULL, NULL), *got;
            looked++;
            if (!vt_symindex_find(x, at[k], &got)) {
                asked++;
                continue;
            }
            if ((want == NULL) != (got == NULL) || (want && strcmp(want, got))) {
                if (!differ++)
                    snprintf(first, sizeof first, "at 0x%llx: libdwfl %s, the index %s", (unsigned long long)at[k],
                             want ? want : "(none)", got ? got : "(none)");
            }
        }
    }
    ok(!differ && asked * 10 <= looked, "%s: %ld look-ups, the same name every time (%ld differ%s%s), %ld left to libdwfl",
       path, looked, differ, differ ? ", first " : "", first, asked);
    vt_symindex_free(x);
    dwfl_end(dwfl);
}

int main(void)
{
    char self[1024];
    snprintf(self, sizeof self, "%s/vramtrace", build_dir());
    check_library("/usr/lib/x86_64-linux-gnu/libLLVM-14.so.1", 40000);
    check_library("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", 5000);
    check_library("/usr/lib/x86_64-linux-gnu/libc.so.6", 2000);
    check_library("/usr/lib/x86_64-linux-gnu/libelf.so.1", 100);
    check_library(self, 500);
    return tap_done();
}
