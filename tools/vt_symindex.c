/* vt_symindex.h. libdwfl looks at the global symbols first, and at the local ones only when no global
 * one answered; so each of the two is indexed on its own. Among the sized symbols that hold the address,
 * libdwfl keeps, in table order, a symbol that starts closer to the address or binds more strongly
 * (global, then weak, then local), and at the same start a smaller one of no weaker binding, or one of
 * no larger size and stronger binding: the holders are few (a function, its aliases), so they are
 * found through the index and that rule is run over them in table order. A symbol without a size is
 * libdwfl's answer only where no sized symbol holds the address and it lies past the end of every sized
 * symbol before the address: there the index says nothing, and libdwfl is asked. */
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "vt_symindex.h"

struct vt_symrec {
    uint64_t value, size;
    const char *name;
    int index; /* in the module's symbol table: libdwfl's order */
    int bind;  /* higher binds more strongly */
};

/* One part of the table (its global symbols, or its local ones). */
struct vt_sympart {
    struct vt_symrec *sized; /* by value, then table order */
    uint64_t *reach;         /* reach[i]: the highest end of sized[0..i] */
    size_t nsized;
    uint64_t *sizeless; /* the values of the symbols without a size, sorted */
    size_t nsizeless;
};

struct vt_symindex {
    struct vt_sympart global, local;
};

/* How many holders the index goes through before it leaves the answer to libdwfl. */
#define VT_SYMINDEX_STEPS 256

static int vt_bind_rank(unsigned bind)
{
    return bind == STB_GLOBAL ? 3 : bind == STB_WEAK ? 2 : bind == STB_LOCAL ? 1 : 0;
}

static int vt_rec_cmp(const void *a, const void *b)
{
    const struct vt_symrec *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

static int vt_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void vt_part_free(struct vt_sympart *p)
{
    free(p->sized);
    free(p->reach);
    free(p->sizeless);
}

/* Symbols [from, to) of mod's table into p; -1 when out of memory. */
static int vt_part_make(Dwfl_Module *mod, int from, int to, struct vt_sympart *p)
{
    size_t cap = to > from ? (size_t)(to - from) : 1;
    if (!(p->sized = malloc(cap * sizeof *p->sized)) || !(p->sizeless = malloc(cap * sizeof *p->sizeless)))
        return -1;
    for (int i = from; i < to; i++) {
        GElf_Sym sym;
        GElf_Addr value;
        GElf_Word shndx;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &value, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || !name[0] || sym.st_shndx == SHN_UNDEF || type == STT_SECTION || type == STT_FILE || type == STT_TLS)
            continue;
        if (sym.st_size)
            p->sized[p->nsized++] = (struct vt_symrec){value, sym.st_size, name, i, vt_bind_rank(GELF_ST_BIND(sym.st_info))};
        else
            p->sizeless[p->nsizeless++] = value;
    }
    qsort(p->sized, p->nsized, sizeof *p->sized, vt_rec_cmp);
    qsort(p->sizeless, p->nsizeless, sizeof *p->sizeless, vt_u64_cmp);
    if (!(p->reach = malloc((p->nsized ? p->nsized : 1) * sizeof *p->reach)))
        return -1;
    uint64_t reach = 0;
    for (size_t i = 0; i < p->nsized; i++) {
        uint64_t end = p->sized[i].value + p->sized[i].size;
        p->reach[i] = reach = end > reach ? end : reach;
    }
    return 0;
}

/* A module with a second, compressed symbol table (.gnu_debugdata, "MiniDebugInfo"), whose symbols
 * libdwfl numbers after the first table's: left to libdwfl. */
static int vt_has_aux_table(Dwfl_Module *mod)
{
    GElf_Addr bias;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return 1;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (name && !strcmp(name, ".gnu_debugdata"))
            return 1;
    }
    return 0;
}

struct vt_symindex *vt_symindex_make(Dwfl_Module *mod)
{
    int n = dwfl_module_getsymtab(mod), first_global = dwfl_module_getsymtab_first_global(mod);
    if (n < 0 || first_global < 0 || first_global > n || vt_has_aux_table(mod))
        return NULL;
    struct vt_symindex *x = calloc(1, sizeof *x);
    if (!x || vt_part_make(mod, first_global, n, &x->global) < 0 || vt_part_make(mod, 1, first_global, &x->local) < 0) {
        vt_symindex_free(x);
        return NULL;
    }
    return x;
}

/* libdwfl's rule between the holder kept so far (c) and the next one in table order (s). */
static int vt_better(const struct vt_symrec *c, const struct vt_symrec *s)
{
    if (c->value < s->value || c->bind < s->bind)
        return 1;
    return c->value == s->value &&
           ((c->size > s->size && c->bind <= s->bind) || (c->size >= s->size && c->bind < s->bind));
}

/* One part's answer: 1 with *name (NULL: none in this part), 0: libdwfl must be asked. */
static int vt_part_find(const struct vt_sympart *p, uint64_t addr, const char **name)
{
    *name = NULL;
    /* The last sized symbol starting at or before addr. */
    size_t lo = 0, hi = p->nsized;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->sized[mid].value <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    uint64_t reach = lo ? p->reach[lo - 1] : 0;
    /* A symbol without a size between the end of every sized one before addr and addr: libdwfl's rules
     * for it depend on the order it reads the table in. */
    size_t a = 0, b = p->nsizeless;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (p->sizeless[mid] < reach)
            a = mid + 1;
        else
            b = mid;
    }
    if (a < p->nsizeless && p->sizeless[a] <= addr)
        return 0;
    /* The holders: back from there while some symbol before reaches past addr. */
    const struct vt_symrec *best = NULL;
    int steps = 0;
    const struct vt_symrec *held[VT_SYMINDEX_STEPS];
    int nheld = 0;
    for (size_t i = lo; i-- > 0 && p->reach[i] > addr;) {
        if (++steps > VT_SYMINDEX_STEPS)
            return 0;
        if (p->sized[i].value + p->sized[i].size > addr)
            held[nheld++] = &p->sized[i];
    }
    /* In table order, as libdwfl reads them. */
    for (int i = 0; i < nheld; i++)
        for (int j = i + 1; j < nheld; j++)
            if (held[j]->index < held[i]->index) {
                const struct vt_symrec *t = held[i];
                held[i] = held[j];
                held[j] = t;
            }
    for (int i = 0; i < nheld; i++)
        if (!best || vt_better(best, held[i]))
            best = held[i];
    *name = best ? best->name : NULL;
    return 1;
}

int vt_symindex_find(const struct vt_symindex *x, uint64_t addr, const char **name)
{
    if (!vt_part_find(&x->global, addr, name))
        return 0;
    if (*name)
        return 1;
    return vt_part_find(&x->local, addr, name);
}

void vt_symindex_free(struct vt_symindex *x)
{
    if (!x)
        return;
    vt_part_free(&x->global);
    vt_part_free(&x->local);
    free(x);
}
