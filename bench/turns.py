# Taking turns (for bench/pingpong.py): with BENCH_TURNS=1 in its environment, a benchmark process
# that has warmed up says "ready" and then runs one batch each time it reads "go" on its stdin, printing
# "value X", until "stop" or the end of its input. Several configurations then run one after another,
# seconds apart, so that the machine's drift meets them all alike.
import os
import sys


def serve(batch):
    """Runs the turns and returns True under pingpong.py; returns False (nothing done) otherwise."""
    if os.environ.get("BENCH_TURNS") != "1":
        return False
    out = sys.stdout
    out.write("ready\n")
    out.flush()
    for line in sys.stdin:
        if line.strip() != "go":
            break
        out.write("value %.6g\n" % batch())
        out.flush()
    return True
