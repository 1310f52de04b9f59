#!/bin/bash
# Boot a throw-away VM with a pure cgroup v2 hierarchy and run tests.sh in it (`make
# check-cgroupv2`).  The host may be v1 or hybrid; the VM always has cgroup2 at /sys/fs/cgroup.
#
# usage: run.sh [-B BUILDDIR] [-k KERNEL] [-t SECONDS] [-o LOG] [-K] [-e SRC[:DEST]]... [BINARY...]
#   BINARY    programs copied to /opt/test with their shared libraries.  Default: the build
#             dir's tests/unit/test-cgroup, and agentrun when it has been built.
#   -B DIR    the build directory (default: the current directory)
#   -k FILE   kernel (default: the newest /boot/vmlinuz-*-amd64)
#   -t SECS   kill the VM after this long (default 180 with KVM, 900 without)
#   env AR_QEMU_ACCEL=kvm|tcg|auto (default auto: KVM if /dev/kvm works, else TCG)
#   -e S[:D]  copy file or directory S to /opt/test/D (D defaults to S's base name), e.g. a
#             bundle for agentrun checks in tests.d/
#   -o FILE   keep the serial console log there
#   -K        keep the work directory (printed)
# Needs qemu-system-x86, linux-image-amd64, cpio, busybox-static.  Exit: 0 every check passed,
# 1 something failed, 77 (automake's "skipped") when qemu or a kernel is missing.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
builddir=$PWD
kernel=
timeout_s=
log_out=
keep=0
extras=()

while getopts "B:k:t:o:Ke:h" opt; do
  case $opt in
  B) builddir=$OPTARG ;;
  k) kernel=$OPTARG ;;
  t) timeout_s=$OPTARG ;;
  o) log_out=$OPTARG ;;
  K) keep=1 ;;
  e) extras+=("$OPTARG") ;;
  h) sed -n '2,20p' "$0"; exit 0 ;;
  *) exit 2 ;;
  esac
done
shift $((OPTIND - 1))

skip() {
  echo "1..0 # SKIP $*"
  exit 77
}

command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 not installed"
command -v cpio >/dev/null || skip "cpio not installed"
if [ -z "$kernel" ]; then
  kernel=$(printf '%s\n' /boot/vmlinuz-*-amd64 | sort -V | tail -n 1)
fi
if [ ! -r "$kernel" ]; then skip "no readable kernel in /boot (apt-get install linux-image-amd64)"; fi
busybox=$(command -v busybox || true)
if [ -z "$busybox" ] || ldd "$busybox" >/dev/null 2>&1; then
  skip "a static busybox is needed (busybox-static)"
fi

bins=("$@")
if [ ${#bins[@]} -eq 0 ]; then
  [ -x "$builddir/tests/unit/test-cgroup" ] && bins+=("$builddir/tests/unit/test-cgroup")
  [ -x "$builddir/agentrun" ] && bins+=("$builddir/agentrun")
  [ -x "$builddir/agentrun-monitor" ] && bins+=("$builddir/agentrun-monitor")
fi

work=$(mktemp -d /tmp/agentrun-cgroupv2.XXXXXX)
cleanup() { if [ $keep -eq 1 ]; then echo "# work dir kept: $work"; else rm -rf "$work"; fi; }
trap cleanup EXIT
root=$work/root
mkdir -p "$root"/{bin,sbin,etc,proc,sys,dev,tmp,run,opt/test}

# --- the initramfs ---
copy_with_libs() {
  local bin=$1 dest=$2
  cp -L "$bin" "$dest"
  # "libx.so => /path (0x..)" and "/lib64/ld-linux-x86-64.so.2 (0x..)": every absolute path
  ldd "$bin" 2>/dev/null | grep -o '/[^ ]*' | while read -r lib; do
    [ -e "$root$lib" ] || cp -L --parents "$lib" "$root"
  done || true
}

cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"
cp "$here/init" "$root/init"
chmod 755 "$root/init"
cp "$here/tests.sh" "$root/opt/test/tests.sh"
if [ -d "$here/tests.d" ]; then cp -r "$here/tests.d" "$root/opt/test/tests.d"; fi
for b in "${bins[@]}"; do
  [ -x "$b" ] || { echo "run.sh: '$b' is not an executable" >&2; exit 2; }
  copy_with_libs "$b" "$root/opt/test/$(basename "$b")"
done
for e in "${extras[@]+"${extras[@]}"}"; do
  src=${e%%:*}
  dst=$(basename "$src")
  [ "$e" != "$src" ] && dst=${e#*:}
  mkdir -p "$(dirname "$root/opt/test/$dst")"
  cp -a "$src" "$root/opt/test/$dst"
done
[ -e /etc/ld.so.cache ] && cp /etc/ld.so.cache "$root/etc/"
printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/bin/false\n' \
  >"$root/etc/passwd"
printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$work/initrd.gz"

# --- the VM ---
# KVM when it works.  /dev/kvm can exist and still hang the guest (nested virtualisation under
# some hypervisors), so a KVM boot that has not reached /init within $kvm_probe seconds is
# abandoned for TCG, which boots this kernel in a few seconds anyway.  AR_QEMU_ACCEL=kvm|tcg
# forces one.
kvm_probe=${AR_QEMU_KVM_PROBE:-25}
accel_mode=${AR_QEMU_ACCEL:-auto}
if [ "$accel_mode" = auto ]; then
  if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then accel_mode=kvm; else accel_mode=tcg; fi
fi
log=$work/console.log

boot() { # boot kvm|tcg: runs the VM, returns qemu's exit status (125: KVM gave no sign of life)
  local accel=() qpid rc=0
  if [ "$1" = kvm ]; then accel=(-enable-kvm -cpu host); fi
  local limit=${timeout_s:-$([ "$1" = kvm ] && echo 180 || echo 900)}
  echo "# kernel $kernel, $1, timeout ${limit}s, binaries: ${bins[*]:-none}"
  timeout -k 10 "$limit" qemu-system-x86_64 -m 512 -smp 2 -nographic -no-reboot \
    "${accel[@]+"${accel[@]}"}" -kernel "$kernel" -initrd "$work/initrd.gz" \
    -append 'console=ttyS0 quiet panic=-1' </dev/null >"$log" 2>&1 &
  qpid=$!
  if [ "$1" = kvm ]; then
    for _ in $(seq "$kvm_probe"); do
      grep -q 'AGENTRUN-CGROUPV2\|# kernel [0-9]' "$log" 2>/dev/null && break
      kill -0 "$qpid" 2>/dev/null || break
      sleep 1
    done
    if ! grep -q 'AGENTRUN-CGROUPV2\|# kernel [0-9]' "$log" 2>/dev/null && kill -0 "$qpid" 2>/dev/null; then
      kill "$qpid" 2>/dev/null || true
      wait "$qpid" 2>/dev/null || true
      return 125
    fi
  fi
  wait "$qpid" || rc=$?
  return $rc
}

set +e
boot "$accel_mode"
qemu_rc=$?
if [ $qemu_rc -eq 125 ]; then
  echo "# KVM guest did not reach /init in ${kvm_probe}s: falling back to TCG"
  boot tcg
  qemu_rc=$?
fi
set -e
tr -d '\r' <"$log" >"$log.txt"
[ -n "$log_out" ] && cp "$log.txt" "$log_out"

# --- the verdict ---
tapout=$(sed -n '/^AGENTRUN-CGROUPV2-BEGIN$/,/^AGENTRUN-CGROUPV2-DONE/p' "$log.txt" |
  grep -v '^AGENTRUN-CGROUPV2-' || true)
grep '^# kernel [0-9]' "$log.txt" || true
printf '%s\n' "$tapout"
done_line=$(grep '^AGENTRUN-CGROUPV2-DONE rc=' "$log.txt" | tail -n 1 || true)
if [ -z "$done_line" ]; then
  echo "run.sh: the VM did not finish (qemu exit $qemu_rc; 124 is the timeout). Console tail:" >&2
  tail -n 40 "$log.txt" >&2
  echo "0 passed, 1 failed"
  exit 1
fi
rc=${done_line#*rc=}
fails=$(printf '%s\n' "$tapout" | grep -c '^not ok' || true)
passes=$(printf '%s\n' "$tapout" | grep -c '^ok' || true)
if [ "$rc" != 0 ] || [ "$fails" -ne 0 ] || [ "$passes" -eq 0 ]; then
  echo "run.sh: FAILED (tests.sh exit $rc, $fails failed, $passes passed)" >&2
  echo "$passes passed, $((fails > 0 ? fails : 1)) failed"
  exit 1
fi
echo "# cgroup v2 VM: all $passes checks passed"
echo "$passes passed, 0 failed"
