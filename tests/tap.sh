# Sourced by the shell TAP tests (tests/t_*.sh): where things are (T the tests, B the build, V the
# command, D the test dumps), a scratch folder W (the test's working folder, removed at the end), and
# check DESCRIPTION, which turns the last command's status into a TAP line (and shows $W/out when it
# failed).
T=$(cd "$(dirname "$0")" && pwd)
B=$(cd "$T/../build" && pwd)
V=$B/vramtrace
D=$T/data
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
# A program a test runs without VRAMTRACE_DIR writes its dumps where it stands: here, not in the clone.
cd "$W" || exit 1
n=0
check() {
  st=$?
  n=$((n + 1))
  # A failure's diagnostics go to standard error too, which prove shows (CI's log then says why);
  # appended, as a file that is both stdout and stderr would be cut short by a plain reopening.
  if [ $st -eq 0 ]; then echo "ok $n - $1"; else echo "not ok $n - $1"; sed 's/^/# /' "$W/out" | head -30 | tee -a /dev/stderr; fi
}
