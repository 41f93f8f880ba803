# Sourced by the bench scripts that run CPython 3.12 (the walk's fast path): first_python312 prints the
# first 3.12 that starts (a pyenv shim on PATH may not), or nothing.
first_python312() {
  for py in $(command -v python3.12) $(ls /root/.pyenv/versions/3.12.*/bin/python3.12 2> /dev/null); do
    "$py" -c pass 2> /dev/null && { echo "$py"; return 0; }
  done
  return 0
}
