#!/bin/bash
# contrib/bench/run.sh: agentrun against crun, runc, a raw namespace floor and bubblewrap, side
# by side in one run. `make bench` calls it; see contrib/bench/README.md.
#
# Every section alternates the runtimes within a round and rotates their order from round to
# round; the table shows the median of the rounds. Timings are figures, never pass/fail.
#
# Environment: AGENTRUN (binary), BENCH_BIN (dir of bench-loop and benchc), BENCH_OUT (where
# results.md/.png/-raw.tsv go), BENCH_ROUNDS (5), BENCH_N (50: lifecycle, split and exec runs
# per round), BENCH_TP_N (200), BENCH_SYSCALLS (2000000), BENCH_EXECS (2000), BENCH_COLD_N (10),
# BENCH_ISO_N (20) and BENCH_ISO_MS (50) for the isolated runs,
# BENCH_SECTIONS (default all: "lifecycle isolated split exec throughput seccomp audit cold"),
# BENCH_KEEP=1 keeps the scratch dir.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
AGENTRUN=${AGENTRUN:-$HERE/../../agentrun}
BENCH_BIN=${BENCH_BIN:-$HERE}
BENCH_OUT=${BENCH_OUT:-$HERE}
POLICY_PASS=${POLICY_PASS:-$HERE/../policy/passthrough.json}
ROUNDS=${BENCH_ROUNDS:-5}
N=${BENCH_N:-50}
TP_N=${BENCH_TP_N:-200}
SYSCALLS=${BENCH_SYSCALLS:-2000000}
EXECS=${BENCH_EXECS:-2000}
COLD_N=${BENCH_COLD_N:-10}
ISO_N=${BENCH_ISO_N:-20}
ISO_MS=${BENCH_ISO_MS:-50}
SECTIONS=${BENCH_SECTIONS:-lifecycle isolated split exec throughput seccomp audit cold}

# shellcheck source=contrib/bench/lib.sh
. "$HERE/lib.sh"
# shellcheck source=contrib/bench/report.sh
. "$HERE/report.sh"

[ "$(id -u)" = 0 ] || die "run as root (containers, cgroups and namespaces)"
[ -x "$AGENTRUN" ] || die "no agentrun at $AGENTRUN (make first)"
for b in bench-loop benchc; do [ -x "$BENCH_BIN/$b" ] || die "no $BENCH_BIN/$b"; done
AGENTRUN=$(readlink -f "$AGENTRUN")

PFX=arb$$
W=$(mktemp -d /tmp/agentrun-bench.XXXXXX) || die "mktemp"
CG_CREATED=()
RUN=$W/run
RUN_MOUNTED=
trap cleanup EXIT
trap 'exit 130' INT TERM
RAW=$W/raw.tsv
: >"$RAW"

# --- measuring ----------------------------------------------------------------------------

# rec METRIC VARIANT ROUND VALUE [FAILS]
rec() { printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-0}" >>"$RAW"; }

# kv KEY LINE: the value of KEY in bench-loop's key=value output
kv() { sed -n "s/.*\\b$1=\\([0-9]*\\).*/\\1/p" <<<"$2"; }

# loop RUNTIME ARGS...: bench-loop inside the runtime's namespace; its stderr goes to a log
loop() {
  local name=$1 out
  shift
  rt "$name"
  out=$("${RT_NS[@]}" "$BENCH_BIN/bench-loop" "$@" 2>>"$W/loop.log") || true
  if [ "$(kv fail "$out")" != 0 ]; then
    log "warning: $name: $(kv fail "$out") of $(kv n "$out") failed: bench-loop $*"
    tail -n 3 "$W/loop.log" >&2
  fi
  echo "$out"
}

# The order of the runtimes rotates every round, so none always runs first or last.
rotate() {
  local r=$1 i
  shift
  local a=("$@")
  for ((i = 0; i < ${#a[@]}; i++)); do echo "${a[(i + r) % ${#a[@]}]}"; done
}

ms_per() { awk -v ns="$1" -v n="$2" 'BEGIN { printf "%.4f", ns / n / 1e6 }'; }

bench_lifecycle() {
  local r v out
  log "1. lifecycle: run /bin/true, $N per round"
  for ((r = 0; r < ROUNDS; r++)); do
    for v in $(rotate $r ar-hard ar-pass crun runc floor); do
      if [ $v = floor ]; then
        out=$(loop_floor -n "$N")
      else
        rt $v
        out=$(loop $v -n "$N" -- "${RT[@]}" run -b "$(bundle true $v 0)" "$PFX-lc-$v-$r-%i")
      fi
      rec lifecycle $v $r "$(ms_per "$(kv wall_ns "$out")" "$N")" "$(kv fail "$out")"
      rec lifecycle_cpu $v $r "$(ms_per "$(($(kv cpu_us "$out") * 1000))" "$N")"
    done
  done
}

# 1b. The same, one run at a time after BENCH_ISO_MS of idle time: how a job that arrives alone
# is served. Back-to-back runs share some of the kernel's deferred work (a cgroup v1 migration
# waits for an RCU grace period only when none has started recently), so they flatter.
bench_isolated() {
  local r v out
  log "1b. isolated lifecycle: run /bin/true after ${ISO_MS} ms idle, $ISO_N per round"
  for ((r = 0; r < ROUNDS; r++)); do
    for v in $(rotate $r ar-hard ar-pass crun runc floor); do
      if [ "$v" = floor ]; then
        out=$(loop_floor -n "$ISO_N" -d "$ISO_MS")
      else
        rt "$v"
        out=$(loop "$v" -n "$ISO_N" -d "$ISO_MS" -- "${RT[@]}" run -b "$(bundle true "$v" 0)" "$PFX-is-$v-$r-%i")
      fi
      rec isolated "$v" $r "$(ms_per "$(kv wall_ns "$out")" "$ISO_N")" "$(kv fail "$out")"
    done
  done
}

# The floor: new mount, pid, net, ipc and uts namespaces, chroot, exec /bin/true.
loop_floor() {
  "$BENCH_BIN/bench-loop" "$@" -- unshare -mpniu --fork chroot "$W/rootfs" /bin/true 2>>"$W/loop.log"
}

bench_split() {
  local r v out
  log "2. split: create / start / delete, $N per round"
  for ((r = 0; r < ROUNDS; r++)); do
    for v in $(rotate $r ar-hard ar-pass crun runc); do
      rt $v
      out=$(loop $v -n "$N" -s "$(bundle true $v 0)" -P "$W/split.pid" -p "$PFX-sp-$v-$r" -- "${RT[@]}")
      rec create $v $r "$(ms_per "$(kv create_ns "$out")" "$N")" "$(kv fail "$out")"
      rec start $v $r "$(ms_per "$(kv start_ns "$out")" "$N")"
      rec delete $v $r "$(ms_per "$(kv delete_ns "$out")" "$N")"
      rec rss_create $v $r "$(kv maxrss_kb "$out")"
    done
  done
}

# start_box RUNTIME ID KIND: a detached container running KIND's bundle, for exec
start_box() {
  rt "$1"
  "${RT_NS[@]}" "${RT[@]}" create -b "$(bundle "$3" "$1" 0)" "$2" </dev/null >/dev/null 2>>"$W/loop.log" &&
    "${RT_NS[@]}" "${RT[@]}" start "$2" </dev/null >/dev/null 2>>"$W/loop.log"
}

stop_box() {
  rt "$1"
  "${RT_NS[@]}" "${RT[@]}" delete --force "$2" </dev/null >/dev/null 2>&1
}

# monitor_hwm ID: VmHWM (KiB) of the agentrun-monitor watching container ID
monitor_hwm() {
  local p
  for p in /proc/[0-9]*; do
    if tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -q "agentrun-monitor.* --id=$1 "; then
      awk '/^VmHWM:/ { print $2 }' "$p/status"
      return
    fi
  done
}

bench_exec() {
  local r v out
  log "3. exec: /bin/true into a running container, $N per round"
  for v in ar-hard ar-pass crun runc; do
    start_box $v "$PFX-ex-$v" sleep || log "warning: cannot start the $v exec container"
  done
  for ((r = 0; r < ROUNDS; r++)); do
    for v in $(rotate $r ar-hard ar-pass crun runc); do
      rt $v
      out=$(loop $v -n "$N" -- "${RT[@]}" exec "$PFX-ex-$v" /bin/true)
      rec exec $v $r "$(ms_per "$(kv wall_ns "$out")" "$N")" "$(kv fail "$out")"
    done
  done
  # 7. the monitor, after it has audited every exec above
  for v in ar-hard ar-pass; do
    rec monitor_hwm $v 0 "$(monitor_hwm "$PFX-ex-$v")"
  done
  for v in ar-hard ar-pass crun runc; do stop_box $v "$PFX-ex-$v"; done
}

bench_throughput() {
  local r v j out
  log "4. throughput: $TP_N containers with 1 and 2 workers"
  for ((r = 0; r < ROUNDS; r++)); do
    for j in 1 2; do
      for v in $(rotate $r ar-hard ar-pass crun runc floor); do
        if [ $v = floor ]; then
          out=$(loop_floor -n "$TP_N" -j $j)
        else
          rt $v
          out=$(loop $v -n "$TP_N" -j $j -- "${RT[@]}" run -b "$(bundle true $v)" "$PFX-tp$j-$v-$r-%i")
        fi
        rec tp$j $v $r "$(awk -v ns="$(kv wall_ns "$out")" -v n="$TP_N" 'BEGIN { printf "%.2f", n / (ns / 1e9) }')" \
          "$(kv fail "$out")"
      done
    done
  done
}

# one_run RUNTIME KIND ID: `run` with stdout captured (the container prints its own figure)
one_run() {
  rt "$1"
  "${RT_NS[@]}" "${RT[@]}" run -b "$(bundle "$2" "$1" 0)" "$3" </dev/null 2>>"$W/loop.log"
}

bench_seccomp() {
  local r v out
  log "5. seccomp: $SYSCALLS getppid() per container"
  # variant = runtime:bundle
  local variants=(ar-hard:getppid ar-hard-docker:getppid-docker ar-pass-docker:getppid-docker
    crun-docker:getppid-docker runc-docker:getppid-docker runc-none:getppid)
  for ((r = 0; r < ROUNDS; r++)); do
    for v in $(rotate $r "${variants[@]}"); do
      local name=${v%%:*} kind=${v#*:}
      local runtime=${name%-docker}
      runtime=${runtime%-none}
      out=$(one_run "$runtime" "$kind" "$PFX-sc-$name-$r" | tail -n1)
      [[ $out =~ ^[0-9.]+$ ]] || { log "warning: $name: no figure"; continue; }
      rec getppid "$name" $r "$out"
    done
  done
}

bench_audit() {
  local r v out
  log "6. exec audit: $EXECS execs of /bin/true in a shell loop"
  for ((r = 0; r < ROUNDS; r++)); do
    for v in $(rotate $r ar-hard ar-noaudit crun runc); do
      out=$(one_run $v audit "$PFX-au-$v-$r" | tail -n1)
      [[ $out =~ ^[0-9]+\ [0-9]+$ ]] || { log "warning: $v: no figure"; continue; }
      rec audit $v $r "$(awk -v a="${out% *}" -v b="${out#* }" -v n="$EXECS" \
        'BEGIN { printf "%.2f", (b - a) / n / 1e3 }')"
    done
  done
}

bench_cold() {
  local r v out etc=() f
  log "8. cold start: python3 -c pass, $COLD_N per round"
  # bubblewrap gets the same read-only view as agentrun's sandbox: /usr and a few /etc files
  for f in passwd group hosts nsswitch.conf ld.so.cache ld.so.conf ld.so.conf.d ssl/certs \
    alternatives localtime python3 python3.11 resolv.conf mime.types; do
    etc+=(--ro-bind-try "/etc/$f" "/etc/$f")
  done
  local bw=(bwrap --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/sbin /sbin
    --symlink usr/lib /lib --symlink usr/lib64 /lib64 "${etc[@]}" --proc /proc --dev /dev
    --tmpfs /tmp --unshare-all --die-with-parent /usr/bin/python3 -c pass)
  for ((r = 0; r < ROUNDS; r++)); do
    for v in $(rotate $r sandbox bwrap host); do
      case $v in
      sandbox) out=$(loop ar-hard -n "$COLD_N" -- "$AGENTRUN" --root "$RUN/ar" \
        --policy "$W/pol-hard.json" sandbox -- python3 -c pass) ;;
      bwrap) out=$(loop host -n "$COLD_N" -- "${bw[@]}") ;;
      host) out=$(loop host -n "$COLD_N" -- /usr/bin/python3 -c pass) ;;
      esac
      rec cold $v $r "$(ms_per "$(kv wall_ns "$out")" "$COLD_N")" "$(kv fail "$out")"
    done
  done
}

# Optional (BENCH_SECTIONS=ablation): where the hardened lifecycle's time goes, by turning one
# policy control off at a time. Figures land in results-raw.tsv as metric "ablation".
ABLATION_CONTROLS="network readonly_rootfs seccomp capabilities no_new_privileges limits rlimits
  devices masked_paths sysctl timeout audit"
bench_ablation() {
  local r v c out
  log "ablation: run /bin/true with one hardening control off, $N per round"
  for c in $ABLATION_CONTROLS; do
    if [ "$c" = audit ]; then
      cp "$W/pol-noaudit.json" "$W/pol-off-$c.json"
    else
      jq --arg c "$c" '.controls[$c] = false' "$W/pol-hard.json" >"$W/pol-off-$c.json"
    fi
  done
  for ((r = 0; r < ROUNDS; r++)); do
    # shellcheck disable=SC2086
    for v in $(rotate $r ar-hard ar-pass $ABLATION_CONTROLS); do
      case $v in
      ar-hard | ar-pass) rt $v ;;
      *) RT=("$AGENTRUN" --root "$RUN/ar" --policy "$W/pol-off-$v.json") ;;
      esac
      out=$(loop host -n "$N" -- "${RT[@]}" run -b "$(bundle true runc 0)" "$PFX-ab-$v-$r-%i")
      rec ablation "$v" $r "$(ms_per "$(kv wall_ns "$out")" "$N")" "$(kv fail "$out")"
    done
  done
  log "ablation medians (ms per run /bin/true):"
  summarize "$RAW" | awk -F'\t' '$1 == "ablation" { printf "  %-20s %7.2f ms\n", ($2 ~ /^ar-/ ? $2 : "off: " $2), $3 }' >&2
}

# --- setup --------------------------------------------------------------------------------

setup() {
  local prof
  ensure_packages
  setup_crun_ns
  OWN_CG=$(own_cgroup)
  record_cgroup_parents
  mkdir -p "$W/bundles"
  mount_state_tmpfs
  write_policies
  make_rootfs
  make_base_config
  prof=$(find_docker_profile)
  jq -f "$HERE/docker-seccomp.jq" "$prof" >"$W/docker-seccomp.json" || die "cannot convert $prof"
  DOCKER_PROFILE=$(describe_profile "$prof")
  mk_bundle true '["/bin/true"]'
  mk_bundle sleep '["/bin/sleep", "1000000"]'
  mk_bundle getppid "[\"/bin/benchc\", \"getppid\", \"$SYSCALLS\"]"
  mk_bundle getppid-docker "[\"/bin/benchc\", \"getppid\", \"$SYSCALLS\"]" "$W/docker-seccomp.json"
  mk_bundle audit "$(jq -nc --arg n "$EXECS" '["/bin/sh", "-c",
    "t0=$(/bin/benchc now); i=0; while [ $i -lt " + $n + " ]; do /bin/true; i=$((i+1)); done; echo $t0 $(/bin/benchc now)"]')"
}

main() {
  local s t0=$SECONDS
  setup
  LOAD_START=$(cut -d' ' -f1 /proc/loadavg)
  log "scratch dir $W; rounds=$ROUNDS n=$N; Docker profile from $DOCKER_PROFILE"
  for s in $SECTIONS; do
    "bench_$s"
  done
  LOAD_END=$(cut -d' ' -f1 /proc/loadavg)
  ELAPSED=$((SECONDS - t0))
  log "measured in $ELAPSED s"
  report "$RAW" "$BENCH_OUT"
}

main "$@"
