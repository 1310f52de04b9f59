# shellcheck shell=bash
# Helpers for tests/reliability/*.bats: killed runtimes, soaks, races and full disks.
#
# Every test gets, under $BATS_TEST_TMPDIR:
#   state/        the runtime's --root
#   audit/        the audit dir of the host policy (never /var/log/agentrun)
#   policy.json   the host policy: agentrun's hardened defaults, audit dir above
#   bundle/       config.json (`agentrun spec`, non-interactive) over a busybox rootfs that the
#                 tests of one file share (read-only, as the hardened policy mounts it)
# Every container ID starts with $ID_PREFIX, so that a leak is told apart from whatever else
# runs on the machine (other test suites may create containers and cgroups at the same time).
# Teardown deletes what the test left and fails it if anything of its containers remains.

REL_DIR=$(cd "$BATS_TEST_DIRNAME" && pwd)
TOP_DIR=$(cd "$REL_DIR/../.." && pwd)
RUNTIME=${RUNTIME:-$TOP_DIR/agentrun}
BUSYBOX=${BUSYBOX:-/bin/busybox}
AR_TIMEOUT=${AR_TIMEOUT:-60}

fail() {
	echo "FAIL: $*" >&2
	return 1
}

assert_status() {
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status; output: $output"
}

assert_output_contains() {
	[[ $output == *"$1"* ]] || fail "expected the output to contain '$1', got: $output"
}

assert_eq() {
	[[ $1 == "$2" ]] || fail "${3:-value}: expected '$2', got '$1'"
}

# ---------------------------------------------------------------------------------------------
# setup

# The rootfs, once per file: busybox and its applets, nothing else.
rel_setup_file() {
	[[ $EUID -eq 0 ]] || fail "the reliability tests must run as root"
	[[ -x $RUNTIME ]] || fail "runtime '$RUNTIME' is not an executable: build it first"
	local root=$BATS_FILE_TMPDIR/rootfs d
	for d in bin sbin usr/bin usr/sbin etc proc sys dev tmp; do
		mkdir -p "$root/$d"
	done
	cp "$BUSYBOX" "$root/bin/busybox"
	chroot "$root" /bin/busybox --install -s
	printf 'root:x:0:0:root:/root:/bin/sh\nnobody:x:65534:65534::/:/bin/false\n' >"$root/etc/passwd"
	printf 'root:x:0:\nnogroup:x:65534:\n' >"$root/etc/group"
	chmod 1777 "$root/tmp"
	# bats makes its dirs 0700
	d=$BATS_FILE_TMPDIR
	while [[ $d == /tmp/?* ]]; do
		chmod a+x "$d"
		d=$(dirname "$d")
	done
}

rel_setup() {
	AR_ROOT=$BATS_TEST_TMPDIR/state
	AUDIT=$BATS_TEST_TMPDIR/audit
	BUNDLE=$BATS_TEST_TMPDIR/bundle
	ID_PREFIX=rel$(printf '%04x%04x' $RANDOM $RANDOM)
	mkdir -p "$AR_ROOT" "$AUDIT" "$BUNDLE"
	chmod a+x "$BATS_TEST_TMPDIR"
	: >"$BATS_TEST_TMPDIR/.ids"
	: >"$BATS_TEST_TMPDIR/.cleanup"
	write_policy
	make_bundle "$BUNDLE"
	cd "$BUNDLE" || return 1
}

# write_policy [JQ-EXPR [JQ-OPTIONS...]]: the hardened defaults, the audit dir in the test,
# edited by JQ-EXPR.
write_policy() {
	local expr=${1:-.}
	(($#)) && shift
	jq -n --arg audit_dir "$AUDIT" "$@" "{audit: {dir: \$audit_dir}} | $expr" \
		>"$BATS_TEST_TMPDIR/policy.json" || fail "bad policy expression $expr"
	export AGENTRUN_POLICY=$BATS_TEST_TMPDIR/policy.json
}

# make_bundle DIR: config.json from `agentrun spec` over the shared rootfs, running `true`.
make_bundle() {
	local bundle=$1
	mkdir -p "$bundle"
	(cd "$bundle" && "$RUNTIME" spec) || fail "agentrun spec failed in $bundle"
	BUNDLE=$bundle update_config '.process.terminal = false | .process.args = ["true"]
		| .root.path = $r' --arg r "$BATS_FILE_TMPDIR/rootfs"
}

# update_config JQ-EXPR [JQ-OPTIONS...]: edit $BUNDLE/config.json in place.
update_config() {
	local expr=$1
	shift
	jq "$@" "$expr" "$BUNDLE/config.json" >"$BUNDLE/config.json.new" &&
		mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
}

# set_cmd SCRIPT: the container runs `sh -c SCRIPT`.
set_cmd() {
	update_config '.process.args = ["sh", "-c", $s]' --arg s "$1"
}

# annotate KEY VALUE: run.agentrun.KEY=VALUE on the bundle's config.
annotate() {
	update_config '.annotations["run.agentrun." + $k] = $v' --arg k "$1" --arg v "$2"
}

# new_id [TAG]: a fresh container ID with the test's prefix, remembered for teardown.
new_id() {
	local id
	id="$ID_PREFIX-${1:-c}$(printf '%04x' $RANDOM)"
	echo "$id" >>"$BATS_TEST_TMPDIR/.ids"
	echo "$id"
}

# on_teardown COMMAND...: run (eval'ed) at teardown before the leak checks.
on_teardown() {
	echo "$*" >>"$BATS_TEST_TMPDIR/.cleanup"
}

# ---------------------------------------------------------------------------------------------
# the runtime

# ar ARGS...: the runtime under bats `run`, with the test's --root and stdio in a file (a
# detached container keeps a pipe open as long as it lives).
ar() {
	ar_with "$RUNTIME" "$@"
}

# ar_with BINARY ARGS...: the same with another build (the fault-injection one).
ar_with() {
	local bin=$1 file=$BATS_TEST_TMPDIR/stdio
	shift
	run _to_file "$file" timeout -k 5 "$AR_TIMEOUT" "$bin" --root "$AR_ROOT" "$@"
	output=$(head -c 65536 "$file")
	echo "# $(basename "$bin") $* -> status $status" >&2
	[[ -z $output ]] || printf '%s\n' "$output" >&2
}

# _to_file FILE CMD...: CMD with its stdio in FILE, never in the pipe of bats' `run`.
_to_file() {
	local file=$1
	shift
	"$@" </dev/null >"$file" 2>&1
}

ar_ok() {
	ar "$@"
	[[ $status -eq 0 ]] || fail "agentrun $* failed with $status: $output"
}

# ar_raw ARGS...: the runtime without `run`, for pipes and background jobs.
ar_raw() {
	timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" "$@"
}

# status_of ID: the status `list` shows for ID, or "absent".
status_of() {
	ar_raw list --format json 2>/dev/null |
		jq -r --arg id "$1" '[(. // [])[] | select(.id == $id) | .status][0] // "absent"'
}

# ---------------------------------------------------------------------------------------------
# leak checks

# cgroup_dirs_of ID: every cgroup dir named ID, in every hierarchy.
cgroup_dirs_of() {
	find /sys/fs/cgroup -mindepth 1 -type d -name "$1" 2>/dev/null
}

# procs_of ID: the processes of container ID, found without trusting agentrun's state: its
# command line names the ID (a runtime, a monitor, an init before execve), or it sits in a
# cgroup named ID.
procs_of() {
	local id=$1 p
	for p in /proc/[0-9]*; do
		[[ ${p#/proc/} != "$$" && ${p#/proc/} != "$BASHPID" ]] || continue
		if tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qwF -- "$id" ||
			grep -qE "/$id(/|\$)" "$p/cgroup" 2>/dev/null; then
			echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | head -c 200)"
		fi
	done
}

# procs_in_netns INODE: processes in network namespace net:[INODE].
procs_in_netns() {
	local l
	for l in /proc/[0-9]*/ns/net; do
		[[ $(readlink "$l" 2>/dev/null) == "net:[$1]" ]] && echo "${l%/ns/net}"
	done
}

# assert_gone ID [NETNS-INODE]: nothing of container ID is left: no state dir, cgroup, mount,
# process (runtime, monitor, init or job) or network namespace.
assert_gone() {
	local id=$1 netns=${2:-} bad=() hit
	[[ ! -e $AR_ROOT/$id ]] || bad+=("state dir: $(ls -A "$AR_ROOT/$id" | tr '\n' ' ')")
	hit=$(cgroup_dirs_of "$id")
	[[ -z $hit ]] || bad+=("cgroups: $hit")
	hit=$(procs_of "$id")
	[[ -z $hit ]] || bad+=("processes: $hit")
	hit=$(awk -v s="$BATS_TEST_TMPDIR" 'index($5, s) == 1 && $5 !~ /\/(fullroot|auditfs)$/ { print $5 }' \
		/proc/self/mountinfo)
	[[ -z $hit ]] || bad+=("mounts: $hit")
	hit=$(grep -F -- "$id" /proc/self/mountinfo)
	[[ -z $hit ]] || bad+=("mounts naming the ID: $hit")
	if [[ -n $netns ]]; then
		hit=$(procs_in_netns "$netns")
		[[ -z $hit ]] || bad+=("processes in its netns net:[$netns]: $hit")
	fi
	if ((${#bad[@]})); then
		printf 'leftover of container %s: %s\n' "$id" "${bad[@]}" >&2
		return 1
	fi
}

# wait_gone ID [NETNS] [SECONDS]: assert_gone, allowing processes a moment to be reaped.
wait_gone() {
	local tries=$((${3:-5} * 10))
	while ((tries-- > 1)); do
		assert_gone "$@" 2>/dev/null && return 0
		sleep 0.1
	done
	assert_gone "$@"
}

# netns_of PID: the inode of PID's network namespace, empty if PID is gone.
netns_of() {
	readlink "/proc/$1/ns/net" 2>/dev/null | tr -dc 0-9
}

rel_teardown() {
	local id rc=0 cmds=() i
	[[ -n ${AR_ROOT:-} ]] || return 0
	cd "$BATS_TEST_TMPDIR" || true
	for id in $(sort -u "$BATS_TEST_TMPDIR/.ids" 2>/dev/null; ls "$AR_ROOT" 2>/dev/null); do
		"$RUNTIME" --root "$AR_ROOT" delete --force "$id" >/dev/null 2>&1 || true
	done
	mapfile -t cmds <"$BATS_TEST_TMPDIR/.cleanup"
	for ((i = ${#cmds[@]} - 1; i >= 0; i--)); do
		eval "${cmds[i]}" || true
	done
	for id in $(sort -u "$BATS_TEST_TMPDIR/.ids"); do
		wait_gone "$id" "" 2 || rc=1
	done
	((rc == 0)) || force_cleanup
	return $rc
}

# force_cleanup: after a leak, remove it so that later tests start clean.
force_cleanup() {
	local id d p
	for id in $(sort -u "$BATS_TEST_TMPDIR/.ids"); do
		for p in $(procs_of "$id" | cut -d' ' -f1); do
			kill -9 "$p" 2>/dev/null || true
		done
		sleep 0.2
		for d in $(cgroup_dirs_of "$id" | sort -r); do
			rmdir "$d" 2>/dev/null || true
		done
	done
	rm -rf "${AR_ROOT:?}"/* 2>/dev/null || true
}

# ---------------------------------------------------------------------------------------------
# host snapshots (soak)

# snapshot FILE: what the host holds that a runtime could leak, one item per line, sorted.
snapshot() {
	{
		awk '{ print "mount " $5 }' /proc/self/mountinfo
		find /sys/fs/cgroup -type d 2>/dev/null | sed 's/^/cgroup /'
		local p
		for p in /proc/[0-9]*; do
			echo "proc ${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null | head -c 120)"
		done
		ls -A "$AR_ROOT" 2>/dev/null | sed 's/^/state /'
	} | sort
}

# counts FILE: "mounts=N cgroups=N procs=N state=N" of a snapshot.
counts() {
	awk '{ n[$1]++ } END { printf "mounts=%d cgroups=%d procs=%d state=%d", n["mount"], n["cgroup"], n["proc"], n["state"] }' "$1"
}

# zombies: zombie processes whose name is one of agentrun's or the job's, "PID PPID NAME".
zombies() {
	local s
	for s in /proc/[0-9]*/stat; do
		awk '$3 == "Z" && ($2 ~ /agentrun|true|sh\)|sleep/) { print $1, $4, $2 }' "$s" 2>/dev/null
	done
}
