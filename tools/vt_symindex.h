/* A module's symbols sorted by address, so that the function at an address is found by a binary search
 * where libdwfl's dwfl_module_addrinfo reads the whole symbol table (1-2 ms an address in a library of
 * 45,000 symbols, such as PyTorch's: docs/performance.md, 2026-12-07 sixth). It gives libdwfl's own
 * answer: the same candidates (named, defined symbols other than sections, files and TLS), global ones
 * before local ones, among the sized symbols that hold the address the one libdwfl's rules keep; and
 * where its rules for symbols without a size could matter (one lies past the end of every sized symbol
 * before the address), or the search would be long, it says so and the caller asks libdwfl. */
#ifndef VT_SYMINDEX_H
#define VT_SYMINDEX_H

#include <elfutils/libdwfl.h>
#include <stdint.h>

struct vt_symindex;

/* The index of mod's symbol table; NULL when it could not be made (then libdwfl is asked every time). */
struct vt_symindex *vt_symindex_make(Dwfl_Module *mod);
/* The name of the symbol libdwfl would give for addr (an absolute address in the module): 1 with *name
 * set (NULL: no symbol), 0 when the index cannot tell and libdwfl must be asked. */
int vt_symindex_find(const struct vt_symindex *x, uint64_t addr, const char **name);
void vt_symindex_free(struct vt_symindex *x);

#endif
