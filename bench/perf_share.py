# The library's share of a process's CPU by perf's samples, a count independent of the library's own
# (the self cost a dump carries, which times every 61st hook call): reads `perf script` output of a run
# recorded with call chains (-g) and gives each sample to the library when the innermost frame that is
# neither the C library, libunwind, the kernel nor the vDSO (code the library calls as well as the
# program) is the library's; a sample in the real driver or runtime under one of our hooks is the
# program's, since the real call would be made without us too. Prints the share, and the library's
# samples by the innermost of its functions and by the outermost (the hook), for where it goes.
#   perf script -i DATA -F comm,tid,ip,sym,dso [--time W] | python3 bench/perf_share.py [LIBNAME]
import collections
import os
import re
import sys

LIB = sys.argv[1] if len(sys.argv) > 1 else "libvramtrace.so"
# Code called by the library and by everything else alike: a sample in it belongs to its caller.
NEUTRAL = re.compile(r"^(libc\.so|libunwind|ld-linux|libpthread|libgcc_s|\[vdso\]|\[kernel|\[unknown\])")
FRAME = re.compile(r"^\s+[0-9a-f]+\s+(.*)\s+\((.*)\)\s*$")


def classify(frames):
    """frames: (symbol, dso) innermost first. Returns (ours, innermost of ours, outermost of ours): ours
    None when no frame says whose the sample is (only neutral ones: a call chain cut short)."""
    ours = []
    for sym, dso in frames:
        base = os.path.basename(dso)
        if base.startswith(LIB):
            ours.append(sym.split("+")[0])
        elif ours:
            break
        elif not NEUTRAL.match(base):
            return False, None, None
    if not ours:
        return None, None, None
    return True, ours[0], ours[-1]


def main():
    total = mine = unknown = 0
    inner, outer = collections.Counter(), collections.Counter()
    frames = []

    def flush():
        nonlocal total, mine, unknown
        if not frames:
            return
        total += 1
        ours, i, o = classify(frames)
        unknown += ours is None
        if ours:
            mine += 1
            inner[i] += 1
            outer[o] += 1
        frames.clear()

    started = False
    for line in sys.stdin:
        m = FRAME.match(line)
        if m:
            frames.append((m.group(1), m.group(2)))
        elif line.strip():
            flush()
            started = True
        else:
            flush()
    flush()
    if not total or not started:
        print("perf_share: no samples read", file=sys.stderr)
        sys.exit(1)
    print("perf samples %d, the library's %d: %.2f %%" % (total, mine, 100.0 * mine / total))
    print("samples whose chain holds only the C library, libunwind, the kernel or unknown frames (whose they are "
          "cannot be told): %d, %.2f %%" % (unknown, 100.0 * unknown / total))
    print("by the library's innermost function:")
    for k, v in inner.most_common(15):
        print("  %6.2f %% %s" % (100.0 * v / total, k))
    print("by the hook (outermost):")
    for k, v in outer.most_common(10):
        print("  %6.2f %% %s" % (100.0 * v / total, k))


main()
