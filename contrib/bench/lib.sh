# contrib/bench/lib.sh: setup, runtimes, bundles and cleanup for run.sh (sourced, not run).
# shellcheck shell=bash

log() { printf '[bench %s] %s\n' "$(date +%T)" "$*" >&2; }
die() { log "error: $*"; exit 1; }

# --- packages -----------------------------------------------------------------------------

# Installs what is missing, from Debian only; never upgrades what is there.
ensure_packages() {
  local missing=() pair cmd pkg
  for pair in crun:crun runc:runc bwrap:bubblewrap gnuplot:gnuplot-nox jq:jq \
    unshare:util-linux busybox:busybox-static; do
    cmd=${pair%%:*} pkg=${pair#*:}
    command -v "$cmd" >/dev/null 2>&1 || missing+=("$pkg")
  done
  [ -e /usr/lib/x86_64-linux-gnu/libc.a ] || missing+=(libc6-dev)
  [ -x /usr/bin/python3 ] || missing+=(python3) # section 8 starts the host's /usr/bin/python3
  # the rootfs needs a static busybox; Debian's plain "busybox" is dynamic
  if command -v busybox >/dev/null 2>&1 && ldd "$(command -v busybox)" >/dev/null 2>&1; then
    missing+=(busybox-static)
  fi
  [ ${#missing[@]} -eq 0 ] && return 0
  log "installing from Debian: ${missing[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
    >"$W/apt.log" 2>&1; then
    apt-get update >>"$W/apt.log" 2>&1
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "${missing[@]}" \
      >>"$W/apt.log" 2>&1 || die "apt-get install ${missing[*]} failed (see $W/apt.log)"
  fi
}

# Docker's default seccomp profile, in Docker's format. Prefer Docker's own file; fetch it
# from its Debian package (download and unpack only: installing it pulls ~250 Go source
# packages); podman's copy of the profile is the last resort.
DOCKER_PROFILE_PKG=golang-github-docker-docker-dev
DOCKER_PROFILE_PATH=usr/share/gocode/src/github.com/docker/docker/profiles/seccomp/default.json
find_docker_profile() {
  local cache=$BENCH_BIN/docker-default-seccomp.json deb
  if [ -s "/$DOCKER_PROFILE_PATH" ]; then echo "/$DOCKER_PROFILE_PATH"; return; fi
  if [ -s "$cache" ]; then echo "$cache"; return; fi
  mkdir -p "$W/deb"
  if (cd "$W/deb" && apt-get download "$DOCKER_PROFILE_PKG" >"$W/deb/log" 2>&1 ||
    { apt-get update >/dev/null 2>&1 && apt-get download "$DOCKER_PROFILE_PKG" >"$W/deb/log" 2>&1; }); then
    deb=$(ls "$W"/deb/*.deb 2>/dev/null | head -n1)
    if [ -n "$deb" ] && dpkg-deb --fsys-tarfile "$deb" | tar -xO "./$DOCKER_PROFILE_PATH" >"$cache.tmp" &&
      [ -s "$cache.tmp" ]; then
      mv "$cache.tmp" "$cache"
      dpkg-deb -f "$deb" Version >"$cache.version" 2>/dev/null
      echo "$cache"
      return
    fi
    rm -f "$cache.tmp"
  fi
  [ -s /usr/share/containers/seccomp.json ] ||
    DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      golang-github-containers-common >"$W/apt2.log" 2>&1
  [ -s /usr/share/containers/seccomp.json ] && { echo /usr/share/containers/seccomp.json; return; }
  die "no Docker seccomp profile: neither $DOCKER_PROFILE_PKG nor golang-github-containers-common"
}

# describe_profile PATH: where the profile came from, for the report
describe_profile() {
  case $1 in
  "/$DOCKER_PROFILE_PATH") echo "Docker's default.json from $DOCKER_PROFILE_PKG (installed)" ;;
  "$BENCH_BIN/docker-default-seccomp.json")
    local v
    v=$(cat "$1.version" 2>/dev/null)
    echo "Docker's default.json from $DOCKER_PROFILE_PKG${v:+ $v} (apt-get download)"
    ;;
  *) echo "$1 (podman's copy: Docker's own profile was not available)" ;;
  esac
}

# --- cgroups ------------------------------------------------------------------------------

# Our own cgroup in the memory v1 hierarchy (hybrid hosts) or in cgroup2: crun 1.8.1 has no
# relative cgroupsPath, so its containers are given this path plus a leaf, to stay nested
# under the caller's cgroup as runc and agentrun do on their own.
own_cgroup() {
  local line
  line=$(grep -E '^[0-9]+:([^:]*,)?memory(,[^:]*)?:' /proc/self/cgroup | head -n1)
  [ -n "$line" ] || line=$(grep -E '^0::' /proc/self/cgroup | head -n1)
  line=${line#*:}
  line=${line#*:}
  [ "$line" = / ] && line=
  echo "$line"
}

# Directories crun will create on the way to $CRUN_CG in the other hierarchies; the ones that
# do not exist yet are removed again by cleanup.
record_cgroup_parents() {
  local h d rel parts
  CG_CREATED=()
  [ -n "$OWN_CG" ] || return 0
  IFS=/ read -r -a parts <<<"${OWN_CG#/}"
  for h in $(cgroup_hierarchies); do
    rel=$h
    for d in "${parts[@]}"; do
      rel="$rel/$d"
      [ -d "$rel" ] || CG_CREATED+=("$rel")
    done
  done
}

# Mount points of every cgroup hierarchy (v1 and v2).
# mountinfo has a variable number of optional fields before "-", so parse from the separator.
cgroup_hierarchies() {
  awk '{ for (i = 7; i <= NF; i++) if ($i == "-") { if ($(i+1) ~ /^cgroup2?$/) print $5; break } }' \
    /proc/self/mountinfo | sort -u
}

# --- runtimes -----------------------------------------------------------------------------

# crun 1.8.1 refuses hybrid cgroups: hide the cgroup2 mount in a private mount namespace. The
# whole timing loop runs in there, so crun's figures do not carry the wrapper's own cost.
setup_crun_ns() {
  CRUN_NS=()
  if mountpoint -q /sys/fs/cgroup/unified 2>/dev/null; then
    CRUN_NS=(unshare -m --propagation private sh -c 'umount /sys/fs/cgroup/unified && exec "$@"' sh)
  fi
}

# rt NAME: sets RT_NS (prefix that enters the runtime's namespace) and RT (the command line).
rt() {
  RT_NS=()
  case $1 in
  ar-hard) RT=("$AGENTRUN" --root "$RUN/ar" --policy "$W/pol-hard.json") ;;
  ar-noaudit) RT=("$AGENTRUN" --root "$RUN/ar" --policy "$W/pol-noaudit.json") ;;
  ar-pass) RT=("$AGENTRUN" --root "$RUN/ar" --policy "$W/pol-pass.json") ;;
  crun) RT_NS=("${CRUN_NS[@]}") RT=(crun --root "$RUN/crun") ;;
  runc) RT=(runc --root "$RUN/runc") ;;
  host) RT=() ;;
  *) die "unknown runtime $1" ;;
  esac
}

# bundle KIND RUNTIME [SLOT]: the bundle dir; SLOT defaults to bench-loop's "%w".
bundle() {
  local fam=std
  [ "$2" = crun ] && fam=crun
  echo "$W/bundles/$1-$fam-w${3:-%w}"
}

# State roots and audit logs go on a tmpfs of their own, as /run is on a production host: on a
# disk, the runtimes' small state files cost more than some of the steps measured here.
mount_state_tmpfs() {
  RUN=$W/run
  mkdir -p "$RUN"
  if [ "${BENCH_STATE_TMPFS:-1}" = 1 ]; then
    mount -t tmpfs -o "size=${BENCH_TMPFS_SIZE:-128m},mode=0711" agentrun-bench "$RUN" ||
      die "cannot mount a tmpfs on $RUN (BENCH_STATE_TMPFS=0 keeps the state on disk)"
    RUN_MOUNTED=1
  fi
  mkdir -p "$RUN/ar" "$RUN/runc" "$RUN/crun" "$RUN/audit"
}

write_policies() {
  jq -n --arg d "$RUN/audit" '{audit: {enabled: true, dir: $d}}' >"$W/pol-hard.json"
  jq -n --arg d "$RUN/audit" '{audit: {enabled: false, dir: $d}}' >"$W/pol-noaudit.json"
  jq --arg d "$RUN/audit" '.audit = {enabled: false, dir: $d}' "$POLICY_PASS" >"$W/pol-pass.json" ||
    die "cannot read $POLICY_PASS"
}

make_rootfs() {
  local c
  mkdir -p "$W/rootfs/bin" "$W/rootfs/tmp" "$W/rootfs/proc" "$W/rootfs/dev"
  cp "$(command -v busybox)" "$W/rootfs/bin/busybox"
  for c in sh true sleep cat echo ls; do ln -sf busybox "$W/rootfs/bin/$c"; done
  cp "$BENCH_BIN/benchc" "$W/rootfs/bin/benchc"
}

# The base config: `agentrun spec` (runc's default), made portable to crun 1.8.1 and runc 1.1.
make_base_config() {
  mkdir -p "$W/spec"
  (cd "$W/spec" && "$AGENTRUN" spec) || die "agentrun spec failed"
  jq --arg r "$W/rootfs" '.ociVersion = "1.0.2" | .root = {path: $r, readonly: true}
    | .process.terminal = false' "$W/spec/config.json" >"$W/base.json" || die "bad spec output"
}

# mk_bundle KIND ARGS-JSON [SECCOMP-JSON-FILE]: one bundle per runtime family and worker slot.
mk_bundle() {
  local kind=$1 args=$2 sec=${3:-/dev/null} slot fam dir cg
  for fam in std crun; do
    for slot in 0 1; do
      dir=$(bundle "$kind" "$fam" "$slot")
      cg=
      [ $fam = crun ] && cg="$OWN_CG/$PFX-crun-w$slot"
      mkdir -p "$dir"
      jq --argjson a "$args" --arg cg "$cg" --slurpfile s "$sec" \
        '.process.args = $a | (if $cg != "" then .linux.cgroupsPath = $cg else . end)
         | (if ($s | length) > 0 then .linux.seccomp = $s[0] else . end)' \
        "$W/base.json" >"$dir/config.json" || die "cannot write $dir/config.json"
    done
  done
}

# --- cleanup ------------------------------------------------------------------------------

cleanup() {
  local id h d i
  [ -n "${W:-}" ] && [ -d "$W" ] || return 0
  set +e
  if [ -d "${RUN:-$W/run}/ar" ]; then
    for id in "$RUN"/ar/*/; do
      id=$(basename "$id")
      [ "$id" != "*" ] || continue
      "$AGENTRUN" --root "$RUN/ar" delete --force "$id" </dev/null >/dev/null 2>&1
    done
  fi
  for id in $(runc --root "$RUN/runc" list -q 2>/dev/null); do
    runc --root "$RUN/runc" delete --force "$id" </dev/null >/dev/null 2>&1
  done
  rt crun
  for id in $("${RT_NS[@]}" "${RT[@]}" list -q 2>/dev/null); do
    "${RT_NS[@]}" "${RT[@]}" delete --force "$id" </dev/null >/dev/null 2>&1
  done
  # cgroups left by a runtime that was killed half-way: only ours, by their unique prefix
  for h in $(cgroup_hierarchies); do
    find "$h" -maxdepth 6 -depth -type d -name "$PFX*" -exec rmdir {} + 2>/dev/null
  done
  for ((i = ${#CG_CREATED[@]} - 1; i >= 0; i--)); do
    rmdir "${CG_CREATED[i]}" 2>/dev/null
  done
  if [ -n "${RUN_MOUNTED:-}" ]; then
    [ -z "${BENCH_KEEP:-}" ] || cp -a "$RUN/audit" "$W/audit" 2>/dev/null
    umount "$RUN" 2>/dev/null || umount -l "$RUN"
  fi
  if [ -z "${BENCH_KEEP:-}" ]; then
    rm -rf --one-file-system "$W"
  else
    log "kept $W"
  fi
}
