# Benchmark driver: runs one benchmark command in several configurations at once, as processes that take
# turns (bench/turns.py): each cycle gives every configuration one batch, in an order that rotates from
# cycle to cycle, all pinned to the same CPUs, so neighbouring batches are seconds apart and see the same
# machine. Prints each cycle's values, then each configuration's median value and its throughput ratio to
# "bare" taken cycle by cycle (median, quartiles, and a 95 % interval of the median by resampling the
# cycles): a machine that drifts 2x between processes or minutes (the H200 machine did) still gives a
# ratio. Two or more bare configurations (bare, bare_b, ...) are the control: their ratio to each other
# says how far two processes of the same program differ, and each configuration's ratio is also given
# against their mean in the same cycle.
#   pingpong.py [--cycles N] [--cpus LIST] [--unit per_s|us] [--lib PATH] CONF... -- COMMAND...
#   pingpong.py --from OUTPUT [NAME]     (the figures again from a run's cycles, against NAME: bare)
# CONF: NAME or NAME:ITEM,ITEM...; ITEM is VAR=VALUE (set for that process) or +ARG (appended to its
# command). Names that begin with "bare" run without the library (the ratios are to the one named "bare"),
# every other configuration with --lib preloaded, or the build its own LD_PRELOAD=PATH names.
# --unit: per_s when a batch prints a rate (higher is better), us when it prints a time per request.
import argparse
import os
import random
import select
import statistics
import subprocess
import sys
import time

TURN_TIMEOUT_S = 300


def parse_conf(spec):
    name, _, rest = spec.partition(":")
    env, args = {}, []
    for item in filter(None, rest.split(",")):
        if item.startswith("+"):
            args.append(item[1:])
        elif "=" in item:
            k, v = item.split("=", 1)
            env[k] = v
        else:
            sys.exit("pingpong.py: %s: %r is neither VAR=VALUE nor +ARG" % (spec, item))
    return name, env, args


def read_line(p, name):
    ready, _, _ = select.select([p.stdout], [], [], TURN_TIMEOUT_S)
    line = p.stdout.readline() if ready else ""
    if not line:
        sys.exit("pingpong.py: %s gave no answer (exit status %s)" % (name, p.poll()))
    return line.split()


def quartiles(v):
    v = sorted(v)
    return v[len(v) // 4], statistics.median(v), v[(3 * len(v)) // 4]


def median_interval(v, rounds=2000):
    """The 2.5th and 97.5th percentiles of the median of v resampled with replacement (a fixed seed, so
    one run's figures read the same each time they are computed)."""
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(v, k=len(v))) for _ in range(rounds))
    return meds[rounds * 25 // 1000], meds[rounds * 975 // 1000 - 1]


def summarize(names, values, unit, ref):
    """Each configuration's ratio to ref cycle by cycle, and (with two bare processes or more) to the
    bare processes' mean."""
    cycles = len(values[ref])
    bares = [n for n in names if n.startswith("bare")]
    mean_bare = [statistics.mean(values[b][i] for b in bares) for i in range(cycles)]
    for n in names:
        r = [(v / b if unit == "per_s" else b / v) for v, b in zip(values[n], values[ref])]
        lo, med, hi = quartiles(r)
        clo, chi = median_interval(r)
        line = "  %-16s median value %.4g  ratio %.3f [%.3f %.3f] (95 %% of the median: %.3f-%.3f)" % (
            n, statistics.median(values[n]), med, lo, hi, clo, chi)
        if len(bares) > 1 and n not in bares:
            m = [(v / b if unit == "per_s" else b / v) for v, b in zip(values[n], mean_bare)]
            line += "; to the bares' mean %.3f (%.3f-%.3f)" % ((statistics.median(m),) + median_interval(m))
        print(line, flush=True)


def from_file(path, unit, ref):
    """The figures again from a run's printed cycles (a run cut off before its own summary, or ratios
    to another configuration than bare)."""
    names, values = [], {}
    try:
        with open(path) as f:
            for no, line in enumerate(f, 1):
                w = line.split()
                if not w or w[0] != "cycle":
                    continue
                if len(w) < 4 or len(w) % 2:
                    sys.exit("pingpong.py: %s:%d: a cycle line is 'cycle N NAME VALUE...'" % (path, no))
                for name, v in zip(w[2::2], w[3::2]):
                    if name not in values:
                        names.append(name)
                        values[name] = []
                    try:
                        values[name].append(float(v))
                    except ValueError:
                        sys.exit("pingpong.py: %s:%d: %r is not a number" % (path, no, v))
    except OSError as e:
        sys.exit("pingpong.py: %s: %s" % (path, e.strerror))
    if ref not in values or len({len(v) for v in values.values()}) != 1:
        sys.exit("pingpong.py: %s: no cycles naming %s, or configurations with different counts" % (path, ref))
    print("%d cycles from %s; ratio: against %s in the same cycle, median [quartiles]" % (len(values[ref]), path, ref))
    summarize(names, values, unit, ref)


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--from":
        ref = sys.argv[3] if len(sys.argv) > 3 else "bare"
        return from_file(sys.argv[2], "per_s", ref)
    ap = argparse.ArgumentParser()
    ap.add_argument("--cycles", type=int, default=10)
    ap.add_argument("--cpus", default="")
    ap.add_argument("--unit", choices=("per_s", "us"), default="per_s")
    ap.add_argument("--lib", default=os.path.join(os.getcwd(), "build", "libvramtrace.so"))
    ap.add_argument("confs", nargs="+")
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("pingpong.py: the benchmark command goes after --")
    cut = argv.index("--")
    opts, command = ap.parse_args(argv[:cut]), argv[cut + 1:]
    confs = [parse_conf(c) for c in opts.confs]
    names = [c[0] for c in confs]
    if "bare" not in names or len(set(names)) != len(names) or not command:
        sys.exit("pingpong.py: give a command, distinct names, and one configuration named bare")
    procs = {}
    for name, env, args in confs:
        e = dict(os.environ, BENCH_TURNS="1", PYTHONUNBUFFERED="1", **env)
        if not name.startswith("bare") and "LD_PRELOAD" not in env:
            e["LD_PRELOAD"] = opts.lib
        cmd = (["taskset", "-c", opts.cpus] if opts.cpus else []) + command + args
        procs[name] = subprocess.Popen(cmd, env=e, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for name, p in procs.items():  # the warm-ups ran side by side; each says when it is done
        while read_line(p, name) != ["ready"]:
            pass
    values = {n: [] for n in names}
    t0 = time.monotonic()
    for cycle in range(opts.cycles):
        order = names[cycle % len(names):] + names[:cycle % len(names)]
        for name in order:
            p = procs[name]
            p.stdin.write("go\n")
            p.stdin.flush()
            words = read_line(p, name)
            if words[0] != "value":
                sys.exit("pingpong.py: %s said %r" % (name, " ".join(words)))
            values[name].append(float(words[1]))
        print("cycle %d %s" % (cycle + 1, " ".join("%s %.4g" % (n, values[n][-1]) for n in names)), flush=True)
    # The figures first: a process slow to exit (or a time limit around the run) must not lose them.
    print("%d cycles in %.1f s; value: %s; ratio: throughput against bare in the same cycle, median "
          "[quartiles]" % (opts.cycles, time.monotonic() - t0, "per second" if opts.unit == "per_s" else "us"),
          flush=True)
    summarize(names, values, opts.unit, "bare")
    for p in procs.values():
        p.stdin.write("stop\n")
        p.stdin.close()
        p.wait()

if __name__ == "__main__":
    main()
