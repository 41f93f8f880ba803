# Hostile processes for tests/t_attacks.sh, each trying to make `vramtrace dump` or `vramtrace metrics`
# trust what it should not:
#   squat PID FILE   binds a listening socket under the name PID's dump socket would have, and writes
#                    FILE when anyone connects (nobody must);
#   answer MODE      a process with libvramtrace.so preloaded but no CUDA call (so no socket of the
#                    library's own), listening under its own pid's name and answering every request
#                    with a forgery: "devzero" (/dev/zero's descriptor), "fifo" (a FIFO's), "path" (a
#                    regular file of its own, named /etc/shadow).
import os
import socket
import sys
import tempfile
import time

mode = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
if mode == "squat":
    s.bind("\0vramtrace.%s.%016x" % (sys.argv[2], 0))
    s.listen(4)
    print("ready", flush=True)
    c, _ = s.accept()
    open(sys.argv[3], "w").write("connected\n")
    sys.exit(0)

s.bind("\0vramtrace.%d.%016x" % (os.getpid(), 0x1111))
s.listen(4)
tmp = tempfile.mkdtemp()
print("ready", flush=True)
kind = sys.argv[2]
deadline = time.time() + 20
while time.time() < deadline:
    c, _ = s.accept()
    # A name that passes the command's check of names, so that what is sent is what gets refused.
    line = b"ok -\n" if c.recv(64).startswith(b"peek") else b"ok /tmp/vramtrace.%d.1.dump\n" % os.getpid()
    if kind == "devzero":
        fd = os.open("/dev/zero", os.O_RDONLY)
    elif kind == "fifo":
        if not os.path.exists(os.path.join(tmp, "f")):
            os.mkfifo(os.path.join(tmp, "f"))
        fd = os.open(os.path.join(tmp, "f"), os.O_RDONLY | os.O_NONBLOCK)
    else:
        p = os.path.join(tmp, "x")
        open(p, "w").write("vramtrace-dump 6\n")
        fd = os.open(p, os.O_RDONLY)
        line = b"ok /etc/shadow\n"
    socket.send_fds(c, [line], [fd])
    os.close(fd)
    c.close()
