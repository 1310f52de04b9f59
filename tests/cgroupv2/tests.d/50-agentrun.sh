# agentrun itself on pure cgroup v2 (sourced by tests.sh; skipped until agentrun is built).
# Each check runs `agentrun run` on a busybox bundle made here and looks at the container's own
# cgroup files from inside (cgroup namespace: the container's cgroup is its /sys/fs/cgroup).

AR=$T/agentrun
AR_BUNDLES=/tmp/ar-bundles

# ar_bundle NAME RESOURCES_JSON ARGS_JSON [ANNOTATIONS_JSON]: a bundle in $AR_BUNDLES/NAME.
ar_bundle() {
  _b=$AR_BUNDLES/$1
  mkdir -p "$_b/rootfs/bin" "$_b/rootfs/proc" "$_b/rootfs/sys" "$_b/rootfs/dev" "$_b/rootfs/tmp"
  cp /bin/busybox "$_b/rootfs/bin/busybox"
  for _c in sh cat sleep grep echo head; do ln -sf busybox "$_b/rootfs/bin/$_c"; done
  cat >"$_b/config.json" <<JSON
{
  "ociVersion": "1.0.2",
  "process": {
    "terminal": false,
    "user": {"uid": 0, "gid": 0},
    "args": $3,
    "env": ["PATH=/bin"],
    "cwd": "/",
    "noNewPrivileges": true
  },
  "root": {"path": "rootfs", "readonly": true},
  "hostname": "ctr",
  "annotations": ${4:-{\}},
  "mounts": [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/sys", "type": "sysfs", "source": "sysfs",
     "options": ["nosuid", "noexec", "nodev", "ro"]},
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
     "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]}
  ],
  "linux": {
    "resources": $2,
    "namespaces": [{"type": "pid"}, {"type": "network"}, {"type": "ipc"}, {"type": "uts"},
                   {"type": "mount"}, {"type": "cgroup"}]
  }
}
JSON
}

# ar_run NAME ID: run the bundle in the foreground; output in /tmp/ar-run.out, status returned.
ar_run() {
  "$AR" run -b "$AR_BUNDLES/$1" "$2" >/tmp/ar-run.out 2>&1
}

ar_limits() {
  ar_bundle limits \
    '{"memory": {"limit": 67108864, "swap": 134217728}, "pids": {"limit": 32},
      "cpu": {"quota": 50000, "period": 100000}}' \
    '["sh", "-c", "cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/memory.swap.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max"]'
  ar_run limits ar-limits || { cat /tmp/ar-run.out; return 1; }
  # memory+swap 128M asked, but the default policy allows no swap beyond the memory limit
  printf '67108864\n0\n32\n50000 100000\n' >/tmp/ar-want
  diff /tmp/ar-want /tmp/ar-run.out
}

ar_gone() {
  ! find /sys/fs/cgroup -name 'ar-limits*' -type d | grep .
}

ar_timeout() {
  ar_bundle timeout '{}' '["sh", "-c", "sleep 60 & sleep 60 & wait"]' '{"run.agentrun.timeout": "2s"}'
  _t0=$(date +%s)
  ar_run timeout ar-timeout
  _rc=$?
  _t1=$(date +%s)
  echo "exit $_rc after $((_t1 - _t0))s"
  [ "$_rc" = 137 ] || { cat /tmp/ar-run.out; return 1; }
  grep -q '"event":"timeout"' /var/log/agentrun/ar-timeout.jsonl || return 1
  ! pgrep -f 'sleep 60' && [ $((_t1 - _t0)) -lt 20 ] &&
    ! find /sys/fs/cgroup -name 'ar-timeout*' -type d | grep .
}

if [ -x "$AR" ]; then
  check "agentrun: memory, swap, pids and cpu limits visible in the container's cgroup" ar_limits
  check "agentrun: the container's cgroup is removed after run" ar_gone
  check "agentrun: timeout kills the job and removes its cgroup" ar_timeout
else
  skip "agentrun not built"
fi
