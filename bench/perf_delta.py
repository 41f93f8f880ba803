# Where a configuration's extra time goes, against another's: two flat profiles of bench/profile_gpu.sh
# (perf report -n --sort dso,sym of the decode window) and the tokens decoded in each window, compared as
# samples per 1000 tokens: by shared object, then the symbols that gained or lost most. A run that is
# slower only because the library's code runs shows its gain in libvramtrace; one that slows the
# program's own code (its caches taken, a lock held longer) shows it in the interpreter's or torch's.
#   perf_delta.py BASE.flat TOKENS NEW.flat TOKENS [TOP]
import collections
import sys


def load(path, tokens):
    """{(dso, sym): samples per 1000 tokens} of a flat profile; exits naming the file on a bad line."""
    per = collections.Counter()
    with open(path) as f:
        for no, line in enumerate(f, 1):
            parts = line.split(None, 4)
            # "  12.34%  567  dso  [.]  symbol"
            if len(parts) < 5 or not parts[0].endswith("%"):
                continue
            try:
                n = int(parts[1])
            except ValueError:
                sys.exit("perf_delta.py: %s:%d: no sample count (perf report -n): %r" % (path, no, line.strip()))
            per[(parts[2], parts[4].strip())] += n * 1000.0 / tokens
    return per


def main():
    if len(sys.argv) < 5:
        sys.exit("usage: perf_delta.py BASE.flat TOKENS NEW.flat TOKENS [TOP]")
    base = load(sys.argv[1], int(sys.argv[2]))
    new = load(sys.argv[3], int(sys.argv[4]))
    top = int(sys.argv[5]) if len(sys.argv) > 5 else 25
    dsos = collections.Counter(), collections.Counter()
    for side, per in zip(dsos, (base, new)):
        for (dso, _), n in per.items():
            side[dso] += n
    tb, tn = sum(base.values()), sum(new.values())
    print("samples per 1000 tokens: base %.1f, new %.1f (%+.1f %%)" % (tb, tn, 100.0 * (tn - tb) / tb))
    print("%10s %10s %10s  %s" % ("base", "new", "delta", "shared object"))
    for dso in sorted(set(dsos[0]) | set(dsos[1]), key=lambda d: -(dsos[1][d] - dsos[0][d])):
        if abs(dsos[1][dso] - dsos[0][dso]) >= 0.005 * tb:
            print("%10.1f %10.1f %+10.1f  %s" % (dsos[0][dso], dsos[1][dso], dsos[1][dso] - dsos[0][dso], dso))
    keys = sorted(set(base) | set(new), key=lambda k: -(new[k] - base[k]))
    print("symbols that gained most:")
    for k in keys[:top]:
        print("%10.1f %10.1f %+10.1f  %s %s" % (base[k], new[k], new[k] - base[k], k[0], k[1][:90]))
    print("symbols that lost most:")
    for k in keys[-top // 3:]:
        print("%10.1f %10.1f %+10.1f  %s %s" % (base[k], new[k], new[k] - base[k], k[0], k[1][:90]))


main()
