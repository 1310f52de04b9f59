# shellcheck shell=bash
# Shared helpers for agentrun's integration suite (bats).
#
# Every test talks to the runtime through $RUNTIME, so the same suite can be
# checked against another runtime:
#   RUNTIME=runc tests/run-bats.sh tests/lifecycle.bats
# The default is the agentrun binary built at the top of the tree, run under
# the passthrough host policy (see use_suite_policy).  Where agentrun must
# differ from runc, a test calls agentrun_only or not_on and skips visibly.
#
# Each test gets, under $BATS_TEST_TMPDIR:
#   bundle/          a busybox bundle: rootfs/ plus config.json from `$RUNTIME spec`
#   state/           the runtime's --root, private to the test
#   out/             a host directory bind-mounted read-write at /out in the container
# and $CID, a fresh container ID.  teardown deletes whatever is left and fails
# the test if the runtime leaked a state dir, cgroup, mount or process.

TESTS_DIR=$(cd "$BATS_TEST_DIRNAME" && pwd)
TOP_DIR=$(dirname "$TESTS_DIR")

RUNTIME=${RUNTIME:-$TOP_DIR/agentrun}
if [[ $RUNTIME != */* ]]; then
	RUNTIME=$(command -v "$RUNTIME" || echo "$RUNTIME")
fi
# Which runtime this is: agentrun, runc or crun.  Tests for points where
# agentrun deliberately differs from runc skip visibly elsewhere.
RUNTIME_NAME=${RUNTIME_NAME:-$(basename "$RUNTIME")}
RECVTTY=${RECVTTY:-$TESTS_DIR/recvtty}
BUSYBOX=${BUSYBOX:-/bin/busybox}
# A hung runtime must not hang the whole suite.
AR_TIMEOUT=${AR_TIMEOUT:-60}

# ---------------------------------------------------------------------------
# assertions

fail() {
	echo "FAIL: $*" >&2
	return 1
}

# assert_status N: the last `ar` exited with N.
assert_status() {
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status; output: $output"
}

# assert_output_contains TEXT: the last `ar` output contains TEXT (a fixed string).
assert_output_contains() {
	[[ $output == *"$1"* ]] || fail "expected output to contain '$1', got: $output"
}

# assert_output_contains_i TEXT: the same, ignoring case.
assert_output_contains_i() {
	[[ ${output,,} == *"${1,,}"* ]] || fail "expected output to contain '$1' (any case), got: $output"
}

assert_output_not_contains() {
	[[ $output != *"$1"* ]] || fail "expected output not to contain '$1', got: $output"
}

# assert_eq GOT WANT [WHAT]
assert_eq() {
	[[ $1 == "$2" ]] || fail "${3:-value}: expected '$2', got '$1'"
}

# ---------------------------------------------------------------------------
# which runtime, which machine

is_agentrun() { [[ $RUNTIME_NAME == agentrun* ]]; }

# agentrun_only REASON: the test checks a point where agentrun deliberately
# differs from runc/crun (the spec says so, or agentrun is stricter).
agentrun_only() {
	is_agentrun || skip "$RUNTIME_NAME differs: $*"
}

# not_on NAME REASON: skip under runtime NAME (e.g. runc lacks a feature that
# the spec has and agentrun and crun implement).
not_on() {
	[[ $RUNTIME_NAME != "$1" ]] || skip "$1 differs: $2"
}

is_cgroup2() { [[ -f /sys/fs/cgroup/cgroup.controllers ]]; }

# requires_cgroup CONTROLLER: skip unless CONTROLLER can be used.
requires_cgroup() {
	[[ -n $(cgroup_mountpoint "$1") ]] || skip "no $1 cgroup hierarchy on this machine"
}

requires_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null || skip "needs $c"
	done
}

# ---------------------------------------------------------------------------
# the runtime

# ar ARGS...: run the runtime under bats `run` with this test's --root.
# The command and its output go to stderr, which bats shows when a test fails.
ar() {
	run timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" "$@"
	echo "# $RUNTIME_NAME $* -> status $status" >&2
	[[ -z $output ]] || printf '%s\n' "$output" >&2
}

# ar_ok ARGS...: like ar, and the runtime must succeed.
ar_ok() {
	ar "$@"
	[[ $status -eq 0 ]] || fail "$RUNTIME_NAME $* failed with $status: $output"
}

# ar_raw ARGS...: the runtime without `run`, for pipes and background jobs.
ar_raw() {
	timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" "$@"
}

# stdio_file ID: where ar_detached sends the runtime's and the container's stdio.
stdio_file() {
	local name=$1
	# bad IDs (tests feed them on purpose) must still make a usable file name
	if [[ ! $name =~ ^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$ ]]; then
		name=x$(printf '%s' "$name" | md5sum | cut -c1-16)
	fi
	echo "$BATS_TEST_TMPDIR/stdio-$name"
}

_ar_to_file() {
	local file=$1
	shift
	timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" "$@" </dev/null >>"$file" 2>&1
}

# ar_detached ARGS... ID: for `create ... ID` and `run -d ... ID` without a
# terminal.  The container inherits the runtime's stdio; under bats `run` that
# would be a pipe that stays open as long as the container lives, so stdio goes
# to $(stdio_file ID) instead.  $status is the runtime's; $output is the file
# as it was when the runtime returned.
ar_detached() {
	local id=${*: -1}
	local file
	file=$(stdio_file "$id")
	: >"$file"
	run _ar_to_file "$file" "$@"
	output=$(cat "$file")
	echo "# $RUNTIME_NAME $* (stdio in $file) -> status $status" >&2
	[[ -z $output ]] || printf '%s\n' "$output" >&2
}

# create_ok [FLAGS...] ID: create a container (detached stdio) and expect success.
create_ok() {
	ar_detached create "$@"
	[[ $status -eq 0 ]] || fail "create $* failed with $status: $output"
}

# run_detached_ok [FLAGS...] ID: run -d, and expect success.
run_detached_ok() {
	ar_detached run -d "$@"
	[[ $status -eq 0 ]] || fail "run -d $* failed with $status: $output"
}

# new_id [PREFIX]: a fresh container ID, remembered for teardown.
new_id() {
	local id
	id="${1:-ar}$(printf '%04x%04x' $RANDOM $RANDOM)"
	echo "$id" >>"$BATS_TEST_TMPDIR/.ids"
	echo "$id"
}

# track_id ID: remember an ID that was not made by new_id.
track_id() {
	echo "$1" >>"$BATS_TEST_TMPDIR/.ids"
}

# state_json ID: print the runtime's state for ID (fails if it has none).
state_json() {
	ar_raw state "$1"
}

# state_field ID FIELD: one field of the state, e.g. state_field $CID status.
state_field() {
	ar_raw state "$1" | jq -r ".$2"
}

# init_pid ID
init_pid() {
	state_field "$1" pid
}

# wait_for_state ID STATUS [SECONDS]
wait_for_state() {
	local id=$1 want=$2 tries=$((${3:-10} * 10)) got=
	while ((tries-- > 0)); do
		got=$(ar_raw state "$id" 2>/dev/null | jq -r .status 2>/dev/null) || true
		[[ $got == "$want" ]] && return 0
		sleep 0.1
	done
	fail "container $id: expected status '$want', last seen '$got'"
}

# wait_for_file FILE [SECONDS]: wait until FILE exists and is not empty.
wait_for_file() {
	local file=$1 tries=$((${2:-10} * 10))
	while ((tries-- > 0)); do
		[[ -s $file ]] && return 0
		sleep 0.1
	done
	fail "timed out waiting for $file"
}

# wait_for_lines FILE N [SECONDS]: wait until FILE has at least N lines.
wait_for_lines() {
	local file=$1 n=$2 tries=$((${3:-10} * 10)) have=0
	while ((tries-- > 0)); do
		have=$({ wc -l <"$file"; } 2>/dev/null || echo 0)
		((have >= n)) && return 0
		sleep 0.1
	done
	fail "timed out waiting for $n lines in $file (have $have)"
}

# ---------------------------------------------------------------------------
# the bundle

# make_rootfs DIR: a busybox root filesystem.
make_rootfs() {
	local root=$1 d
	for d in bin sbin usr/bin usr/sbin etc proc sys dev tmp root out; do
		mkdir -p "$root/$d"
	done
	cp "$BUSYBOX" "$root/bin/busybox"
	# busybox installs its applets' symlinks to /bin/busybox as seen from the rootfs
	chroot "$root" /bin/busybox --install -s
	cat >"$root/etc/passwd" <<-'EOF'
		root:x:0:0:root:/root:/bin/sh
		user:x:1000:1000:user:/tmp:/bin/sh
		nobody:x:65534:65534:nobody:/nonexistent:/bin/false
	EOF
	cat >"$root/etc/group" <<-'EOF'
		root:x:0:
		wheel:x:10:
		users:x:100:user
		user:x:1000:
		nogroup:x:65534:
	EOF
	chmod 1777 "$root/tmp"
}

# update_config JQ-EXPR [JQ-OPTIONS...] [--bundle DIR]: edit config.json in place.
#   update_config '.process.args = ["true"]'
#   update_config '.hostname = $h' --arg h box
update_config() {
	local expr=$1 bundle=$BUNDLE
	shift
	local args=()
	while (($#)); do
		if [[ $1 == --bundle ]]; then
			bundle=$2
			shift 2
		else
			args+=("$1")
			shift
		fi
	done
	jq "${args[@]}" "$expr" "$bundle/config.json" >"$bundle/config.json.new" &&
		mv "$bundle/config.json.new" "$bundle/config.json"
}

# set_cmd SCRIPT: the container runs `sh -c SCRIPT`.
set_cmd() {
	update_config '.process.args = ["sh", "-c", $s]' --arg s "$1"
}

# add_mount DEST TYPE SOURCE [OPTIONS-JSON-ARRAY]
add_mount() {
	update_config '.mounts += [{destination: $d, type: $t, source: $s, options: $o}]' \
		--arg d "$1" --arg t "$2" --arg s "$3" --argjson o "${4:-[]}"
}

# make_bundle DIR: rootfs plus a config.json from `$RUNTIME spec`, made
# non-interactive (terminal false) and with $OUT bind-mounted at /out.
make_bundle() {
	local bundle=$1
	mkdir -p "$bundle"
	make_rootfs "$bundle/rootfs"
	(cd "$bundle" && "$RUNTIME" spec) || fail "$RUNTIME_NAME spec failed in $bundle"
	BUNDLE=$bundle update_config '
		.process.terminal = false
		| .process.args = ["true"]
		| .mounts += [{destination: "/out", type: "bind", source: $out, options: ["rbind", "rw"]}]' \
		--arg out "$OUT" --bundle "$bundle"
}

# ---------------------------------------------------------------------------
# setup and teardown

ar_setup() {
	[[ $EUID -eq 0 ]] || fail "the integration tests must run as root"
	[[ -x $RUNTIME ]] || fail "runtime '$RUNTIME' is not an executable (build it, or set RUNTIME=runc)"
	AR_ROOT=$BATS_TEST_TMPDIR/state
	BUNDLE=$BATS_TEST_TMPDIR/bundle
	ROOTFS=$BUNDLE/rootfs
	OUT=$BATS_TEST_TMPDIR/out
	HOSTDIR=$BATS_TEST_TMPDIR/host
	mkdir -p "$AR_ROOT" "$OUT" "$HOSTDIR"
	chmod 777 "$OUT"
	# bats makes its temp dirs 0700: let user-namespaced ids reach the bundle
	local d=$BATS_TEST_TMPDIR
	while [[ $d == /tmp/?* ]]; do
		chmod a+x "$d"
		d=$(dirname "$d")
	done
	: >"$BATS_TEST_TMPDIR/.ids"
	: >"$BATS_TEST_TMPDIR/.cleanup"
	if is_agentrun; then
		use_suite_policy
	fi
	make_bundle "$BUNDLE"
	CID=$(new_id)
	cd "$BUNDLE" || return 1
}

# use_suite_policy: this suite checks the runtime doing what config.json says,
# so agentrun runs under the passthrough host policy (contrib/policy), with its
# audit log kept inside the test.  AR_SUITE_POLICY=FILE picks another policy;
# AR_SUITE_POLICY=none leaves AGENTRUN_POLICY alone.
use_suite_policy() {
	local src=${AR_SUITE_POLICY:-$TOP_DIR/contrib/policy/passthrough.json}
	[[ $src != none ]] || return 0
	[[ -r $src ]] || fail "policy $src not found"
	mkdir -p "$BATS_TEST_TMPDIR/audit"
	jq --arg a "$BATS_TEST_TMPDIR/audit" '.audit = ({dir: $a} + (.audit // {}))' "$src" \
		>"$BATS_TEST_TMPDIR/policy.json" || fail "bad policy $src"
	export AGENTRUN_POLICY=$BATS_TEST_TMPDIR/policy.json
}

# on_teardown COMMAND...: run COMMAND (eval'ed) at teardown, after the
# containers are gone and before the leak checks, newest first.
on_teardown() {
	echo "$*" >>"$BATS_TEST_TMPDIR/.cleanup"
}

_run_cleanups() {
	local cmds=() i
	mapfile -t cmds <"$BATS_TEST_TMPDIR/.cleanup"
	for ((i = ${#cmds[@]} - 1; i >= 0; i--)); do
		eval "${cmds[i]}" || true
	done
	: >"$BATS_TEST_TMPDIR/.cleanup"
}

_known_ids() {
	{
		cat "$BATS_TEST_TMPDIR/.ids" 2>/dev/null
		ar_raw list -q 2>/dev/null
	} | sort -u
}

ar_teardown() {
	local id rc=0
	cd "$BATS_TEST_TMPDIR" || true
	[[ -n ${AR_ROOT:-} ]] || return 0
	for id in $(_known_ids); do
		ar_raw delete --force "$id" >/dev/null 2>&1 || true
	done
	_run_cleanups
	for id in $(_known_ids); do
		assert_no_leftovers "$id" || rc=1
	done
	if ((rc != 0)); then
		# keep the machine usable for the next tests, then report the leak
		_force_cleanup
		return 1
	fi
}

setup() { ar_setup; }
teardown() { ar_teardown; }

# ---------------------------------------------------------------------------
# leak checks

# cgroup_mountpoint CONTROLLER: where CONTROLLER's hierarchy is mounted; for a
# controller handled by cgroup2 (pure v2, or the unified hierarchy of a hybrid
# setup) the cgroup2 mount point.
cgroup_mountpoint() {
	local ctrl=$1 mnt
	mnt=$(awk -v c="$ctrl" '
		{ for (i = 7; $i != "-"; i++) ; fstype = $(i + 1); opts = $(i + 3) }
		fstype == "cgroup" { n = split(opts, o, ","); for (j = 1; j <= n; j++) if (o[j] == c) { print $5; exit } }
	' /proc/self/mountinfo)
	if [[ -z $mnt ]]; then
		local m
		for m in $(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup2") print $5 }' /proc/self/mountinfo); do
			if grep -qw -- "$ctrl" "$m/cgroup.controllers" 2>/dev/null; then
				mnt=$m
				break
			fi
		done
	fi
	echo "$mnt"
}

# cgroup_dir PID CONTROLLER: the host path of PID's cgroup for CONTROLLER.
cgroup_dir() {
	local pid=$1 ctrl=$2 mnt path
	mnt=$(cgroup_mountpoint "$ctrl")
	[[ -n $mnt ]] || return 1
	path=$(awk -F: -v c="$ctrl" '
		{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c || a[i] == "name=" c) { print $3; exit } }
	' "/proc/$pid/cgroup")
	if [[ -z $path ]]; then
		path=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	fi
	echo "$mnt${path%/}"
}

# container_cgroup ID CONTROLLER: the cgroup dir of the container's init.
container_cgroup() {
	local pid
	pid=$(init_pid "$1") || return 1
	cgroup_dir "$pid" "$2"
}

# the dev:inode of a directory, the way /proc/PID/root of a process that
# pivot_root'ed or chroot'ed into it shows up
_devino() {
	stat -L -c '%d:%i' "$1" 2>/dev/null || true
}

# _id_tokens ID: the parts of ID that can name a cgroup or state dir.
_id_tokens() {
	local IFS=$'/ \t\n' part
	for part in $1; do
		# short or glob-like parts would match unrelated cgroups and processes
		if [[ ${#part} -ge 4 && $part != *[][*?\\]* ]]; then
			echo "$part"
		fi
	done
}

# assert_no_leftovers ID: nothing of container ID is left on the host: no
# state dir, no cgroup, no mount under this test's bundle or state root, no
# process inside the rootfs, no process that names ID on its command line.
# Call it after every bad input; teardown calls it for every known ID.
assert_no_leftovers() {
	local id=$1 bad=() tok hit devino procs
	# expanded here, so the greps below do not list themselves
	procs=(/proc/[0-9]*/cmdline)
	for tok in $(_id_tokens "$id"); do
		[[ ! -e $AR_ROOT/$tok ]] || bad+=("state dir $AR_ROOT/$tok")
		hit=$(find /sys/fs/cgroup -mindepth 2 -type d -name "*$tok*" 2>/dev/null | head -5)
		[[ -z $hit ]] || bad+=("cgroup(s): $hit")
		hit=$(grep -l -a -F -- "$tok" "${procs[@]}" 2>/dev/null | grep -v "^/proc/$$/" | head -5)
		if [[ -n $hit ]]; then
			local f
			for f in $hit; do
				bad+=("process ${f//[!0-9]/}: $(tr '\0' ' ' <"$f" 2>/dev/null)")
			done
		fi
	done
	if [[ -n $(find "$AR_ROOT" -mindepth 1 -maxdepth 1 -type d 2>/dev/null) ]]; then
		bad+=("state root not empty: $(ls -A "$AR_ROOT")")
	fi
	hit=$(awk -v b="$BUNDLE" -v s="$AR_ROOT" 'index($5, b) == 1 || index($5, s) == 1 { print $5 }' /proc/self/mountinfo)
	[[ -z $hit ]] || bad+=("mounts: $hit")
	devino=$(_devino "$ROOTFS")
	if [[ -n $devino ]]; then
		hit=$(stat -L -c '%d:%i %n' /proc/[0-9]*/root /proc/[0-9]*/cwd 2>/dev/null |
			awk -v d="$devino" '$1 == d { print $2 }' | head -5)
		[[ -z $hit ]] || bad+=("processes in the rootfs: $hit")
	fi
	if ((${#bad[@]})); then
		printf 'leftover of container %s: %s\n' "$id" "${bad[@]}" >&2
		return 1
	fi
}

# _force_cleanup: after a leak, remove it so later tests start clean.
_force_cleanup() {
	local devino p m tok d
	devino=$(_devino "$ROOTFS")
	for p in $(stat -L -c '%d:%i %n' /proc/[0-9]*/root 2>/dev/null | awk -v d="$devino" '$1 == d { print $2 }'); do
		p=${p#/proc/}
		kill -9 "${p%/root}" 2>/dev/null || true
	done
	for m in $(awk -v b="$BATS_TEST_TMPDIR" 'index($5, b) == 1 { print $5 }' /proc/self/mountinfo | sort -r); do
		umount -l "$m" 2>/dev/null || true
	done
	local id
	for id in $(_known_ids); do
		for tok in $(_id_tokens "$id"); do
			for d in $(find /sys/fs/cgroup -mindepth 2 -type d -name "*$tok*" 2>/dev/null | sort -r); do
				xargs -r kill -9 <"$d/cgroup.procs" 2>/dev/null || true
				sleep 0.1
				rmdir "$d" 2>/dev/null || true
			done
		done
	done
	rm -rf "${AR_ROOT:?}"/* 2>/dev/null || true
}

# ---------------------------------------------------------------------------
# terminals

# start_recvtty SOCKET OUTFILE: a console-socket receiver in the background
# that copies the container's terminal output to OUTFILE.  tests/recvtty takes
# runc's recvtty arguments: recvtty [--mode single|null] [--pid-file F] SOCKET.
start_recvtty() {
	local sock=$1 out=$2
	[[ -x $RECVTTY ]] || skip "tests/recvtty is not built (make tests/recvtty)"
	rm -f "$sock"
	"$RECVTTY" --mode single --pid-file "$BATS_TEST_TMPDIR/recvtty.pid" "$sock" </dev/null >"$out" 2>&1 &
	local pid=$!
	on_teardown "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
	local tries=50
	while ((tries-- > 0)); do
		[[ -S $sock ]] && return 0
		sleep 0.1
	done
	fail "recvtty did not create $sock"
}
