#!/bin/sh
# The checks that run inside the cgroup v2 VM, from /opt/test, where run.sh put the binaries
# (with their shared libraries) and any --extra files.  Prints TAP: one top-level line per check;
# the output of a TAP program is indented underneath it as a subtest.
#
# To add checks, put a file in tests/cgroupv2/tests.d/ (run.sh copies the directory): each
# *.sh there is sourced in name order and can use the helpers below.  Example:
#   check "memory limit visible" grep -qx 67108864 /sys/fs/cgroup/ctr/memory.max
#   tap test-foo --flag          # a TAP program from /opt/test
#   skip "needs agentrun"        # counted, never a failure
T=/opt/test
n=0
failed=0

ok() {
  n=$((n + 1))
  echo "ok $n - $*"
}
not_ok() {
  n=$((n + 1))
  failed=$((failed + 1))
  echo "not ok $n - $*"
}
skip() {
  n=$((n + 1))
  echo "ok $n # SKIP $*"
}
# check DESCRIPTION COMMAND...: ok when the command succeeds; its output becomes diagnostics.
check() {
  _desc=$1
  shift
  if "$@" >/tmp/check.out 2>&1; then
    ok "$_desc"
  else
    not_ok "$_desc"
    sed 's/^/# /' /tmp/check.out
  fi
}
# check_fail DESCRIPTION COMMAND...: ok when the command fails.
check_fail() {
  _desc=$1
  shift
  if "$@" >/tmp/check.out 2>&1; then
    not_ok "$_desc"
    sed 's/^/# /' /tmp/check.out
  else
    ok "$_desc"
  fi
}
# tap PROGRAM [ARGS...]: run a TAP program from $T; ok if it exits 0 with no "not ok" line.
tap() {
  _prog=$1
  shift
  "$T/$_prog" "$@" >/tmp/tap.out 2>&1
  _rc=$?
  sed 's/^/    /' /tmp/tap.out
  if [ $_rc -eq 0 ] && ! grep -q '^not ok' /tmp/tap.out; then
    ok "$_prog"
  else
    not_ok "$_prog (exit $_rc)"
  fi
}

if [ -x "$T/test-cgroup" ]; then
  tap test-cgroup
else
  skip "test-cgroup not built"
fi

for f in "$T"/tests.d/*.sh; do
  [ -f "$f" ] || continue
  echo "# $(basename "$f")"
  # shellcheck disable=SC1090
  . "$f"
done

echo "1..$n"
[ "$failed" -eq 0 ]
