/* Marks for the code's layout. A hook runs between long stretches of the program's own work, which push
 * our code out of the near caches: every cache line of code a hook touches is a miss (docs/performance.md,
 * 2026-12-04). So what a hook rarely does is kept out of the lines it always runs: functions called
 * rarely are declared __attribute__((cold)) (the compiler also moves the blocks that call them out of
 * line), tests that are rarely true say so with VT_UNLIKELY, and the common case of a test the compiler
 * would otherwise lay out as a jump away says so with VT_LIKELY. The functions every allocation and free
 * go through are VT_HOT: the compiler puts them together (.text.hot), so the path is a few runs of
 * adjacent lines, which the processor fetches ahead, not one or two lines in each of a dozen files. */
#ifndef VT_HOT_H
#define VT_HOT_H

#define VT_HOT __attribute__((hot))
#define VT_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define VT_LIKELY(x) __builtin_expect(!!(x), 1)

#endif
