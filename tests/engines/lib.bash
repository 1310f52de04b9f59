# shellcheck shell=bash disable=SC2034,SC2154 # variables for the .bats files; $status is bats'
# Shared helpers for the engine tests (tests/engines/*.bats).
#
# run.sh starts the engines once (setup.sh) and exports ENG_DIR.  A .bats file
# run on its own starts just its own engine in setup_file and stops it in
# teardown_file:  bats tests/engines/docker.bats
#
# What the tests get, from $ENG_DIR/env:
#   dk ARGS      docker against the test's dockerd
#   pm ARGS      podman with the test's containers.conf and storage
#   cr ARGS      ctr against the test's containerd
#   $CALLS       every call the engines made to agentrun (trace-runtime.sh)
# and PROBE, a shell command whose output assert_agentrun_view checks.

bats_require_minimum_version 1.5.0

ENGINES_DIR=$(cd "$BATS_TEST_DIRNAME" && pwd)
TOP_DIR=$(cd "$ENGINES_DIR/../.." && pwd)
# A hung engine must not hang the suite.
ENG_TIMEOUT=${ENG_TIMEOUT:-90}

# What a container prints to show that agentrun made it: its no_new_privs and
# seccomp state, and the root mount (read-only under agentrun's default policy).
PROBE='grep -E "^(NoNewPrivs|Seccomp):" /proc/self/status; grep " / / " /proc/self/mountinfo'

# ---------------------------------------------------------------------------
# setup

# eng_setup_file ENGINE: in setup_file.  Starts ENGINE unless run.sh did.
eng_setup_file() {
	if [[ -z ${ENG_DIR:-} ]]; then
		export ENG_DIR
		ENG_DIR=$(mktemp -d /tmp/ar-eng.XXXXXX)
		export ENG_OWNED=1
		# A failed start is reported by each test (eng_setup), not here.
		"$ENGINES_DIR/setup.sh" "$ENG_DIR" "$1" >&2 || true
	fi
}

# eng_teardown_file: in teardown_file.  Stops what eng_setup_file started.
eng_teardown_file() {
	[[ -z ${ENG_OWNED:-} ]] || "$ENGINES_DIR/teardown.sh" "$ENG_DIR" >&2
}

# eng_setup ENGINE: in setup.  Loads the env; skips if ENGINE is not installed,
# fails if it did not start.
eng_setup() {
	# shellcheck disable=SC1091
	. "$ENG_DIR/env" 2>/dev/null
	[[ -n ${CALLS:-} ]] || fail "setup.sh failed before starting any engine (see setup_file's output)" || return
	local failed=${1^^}_FAILED have=HAVE_${1^^}
	[[ -z ${!failed:-} ]] || fail "${!failed}" || return
	[[ -n ${!have:-} ]] || skip "$1 is not installed"
	CALLS_MARK=$(wc -l <"$CALLS")
}

# ---------------------------------------------------------------------------
# the engines

dk() {
	timeout -k 5 "$ENG_TIMEOUT" "$DOCKER" -H "$DOCKER_HOST" "$@"
}

# Containers nest their cgroups under $CGPARENT (relative: under our own
# cgroup); conmon stays where it is (containers.conf: cgroups = "no-conmon").
pm() {
	local args=("$@")
	if [[ ${args[0]} == run || ${args[0]} == create ]]; then
		args=("${args[0]}" --cgroup-parent "$CGPARENT" "${args[@]:1}")
	fi
	CONTAINERS_CONF=$CONTAINERS_CONF CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF \
		timeout -k 5 "$ENG_TIMEOUT" podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/run" \
		--tmpdir "$PODMAN_DIR/tmp" --runtime agentrun "${args[@]}"
}

cr() {
	timeout -k 5 "$ENG_TIMEOUT" ctr -a "$CTR_SOCK" "$@"
}

# cr_run [FLAGS...] ID ARGS...: `ctr run` through agentrun.  ID must come right
# after the flags, then the command: cr_run --rm t1 echo hi
cr_run() {
	local flags=()
	while [[ $1 == -* ]]; do
		flags+=("$1")
		shift
	done
	local id=$1
	shift
	cr run "${flags[@]}" --runc-binary "$ENG_DIR/bin/agentrun" --runc-root "$CTR_RUNC_ROOT" \
		--cgroup "$CGPARENT/$id" "$IMAGE_CTR" "$id" "$@"
}

# with_tty CMD...: run CMD with a pseudo-terminal as its stdin/stdout, as a user
# at a terminal would (for `docker exec -t`).  Carriage returns are dropped.
with_tty() {
	local cmd
	printf -v cmd '%q ' "$@"
	script -qec "$cmd" /dev/null </dev/null | tr -d '\r'
	return "${PIPESTATUS[0]}"
}

requires_script() {
	command -v script >/dev/null || skip "needs script(1) from util-linux"
}

# uniq_name PREFIX: a container name unique to this test run.
uniq_name() {
	echo "$1-$(printf '%04x%04x' $RANDOM $RANDOM)"
}

# ---------------------------------------------------------------------------
# assertions

fail() {
	echo "FAIL: $*" >&2
	show_calls
	return 1
}

# show_calls: the calls to agentrun that this test caused (on failure).
show_calls() {
	[[ -n ${CALLS:-} && -f $CALLS ]] || return 0
	echo "# agentrun calls during this test:" >&2
	tail -n +"$((${CALLS_MARK:-0} + 1))" "$CALLS" | cut -c1-400 | tail -n 40 | sed 's/^/#   /' >&2
}

# log_run [-N | !] CMD...: `run` CMD and show what it did on stderr (seen when
# a test fails).  -N or ! are run's: the status CMD must exit with.
log_run() {
	local flags=() bad=0
	while [[ $1 == -[0-9]* || $1 == '!' ]]; do
		flags+=("$1")
		shift
	done
	run "${flags[@]}" "$@" || bad=1
	echo "# $* -> status $status" >&2
	[[ -z $output ]] || printf '%s\n' "$output" | head -n 60 >&2
	((bad == 0)) || fail "$1 exited with $status, not as expected (${flags[*]})"
}

assert_status() {
	[[ $status -eq $1 ]] || fail "expected exit status $1, got $status; output: $output"
}

assert_success() {
	[[ $status -eq 0 ]] || fail "expected success, got $status; output: $output"
}

assert_output_contains() {
	[[ $output == *"$1"* ]] || fail "expected output to contain '$1', got: $output"
}

# assert_output_matches ERE
assert_output_matches() {
	grep -qE -- "$1" <<<"$output" || fail "expected output to match /$1/, got: $output"
}

assert_eq() {
	[[ $1 == "$2" ]] || fail "${3:-value}: expected '$2', got '$1'"
}

# assert_agentrun_view [TEXT]: TEXT (default $output) is what PROBE printed in a
# container that agentrun hardened: no_new_privs on, a seccomp filter, and a
# read-only root.
assert_agentrun_view() {
	local text=${1-$output}
	grep -qE $'^NoNewPrivs:[ \t]+1$' <<<"$text" ||
		fail "NoNewPrivs is not 1: the process does not run under agentrun's policy: $text" || return
	grep -qE $'^Seccomp:[ \t]+2$' <<<"$text" ||
		fail "Seccomp is not 2 (filter): $text" || return
	grep -qE ' / / ro[, ]' <<<"$text" ||
		fail "the root is not mounted read-only: $text"
}

# CAPS_PROBE prints the bounding sets of the process itself and of the container's
# init; assert_caps_within_init checks that the first adds nothing to the second.
CAPS_PROBE='grep ^CapBnd: /proc/self/status /proc/1/status'

assert_caps_within_init() {
	local self init
	self=$(sed -n 's|^/proc/self/status:CapBnd:[[:space:]]*||p' <<<"$output")
	init=$(sed -n 's|^/proc/1/status:CapBnd:[[:space:]]*||p' <<<"$output")
	[[ -n $self && -n $init ]] || fail "no CapBnd lines in: $output" || return
	(((0x$self & ~0x$init) == 0)) ||
		fail "the exec'd process has capabilities the container's init lacks: $self vs init's $init"
}

# calls_since_mark: the trace lines of calls made since eng_setup.
calls_since_mark() {
	tail -n +"$((CALLS_MARK + 1))" "$CALLS"
}

# assert_called ERE: some call to agentrun since the test started matched ERE
# (matched against "PID argv: GLOBAL-FLAGS VERB ARGS", from a word boundary).
assert_called() {
	calls_since_mark | grep -qE -- "^[0-9]+ argv: (.* )?$1" || fail "no call to agentrun matched /$1/"
}

# exit_of ERE: the exit code of the first call since the mark whose argv matched.
exit_of() {
	local pid
	pid=$(calls_since_mark | grep -E -- "^[0-9]+ argv: (.* )?$1" | head -n 1 | cut -d' ' -f1)
	[[ -n $pid ]] && calls_since_mark | sed -n "s/^$pid exit: //p" | head -n 1
}

# assert_audited ID: agentrun's audit log for container ID, in the test policy's
# audit dir, has its create and exit records.
assert_audited() {
	local f=$AUDIT_DIR/$1.jsonl n=50
	while ((n-- > 0)) && ! grep -q '"event":"exit"' "$f" 2>/dev/null; do sleep 0.1; done
	[[ -s $f ]] || fail "no audit log $f" || return
	grep -q '"event":"create"' "$f" || fail "no create record in $f: $(head -c 500 "$f")" || return
	grep -q '"event":"exit"' "$f" || fail "no exit record in $f: $(tail -c 500 "$f")"
}

# cgroup_dir_of PID CONTROLLER: the host path of PID's cgroup for CONTROLLER:
# its v1 hierarchy, or the unified one on a pure cgroup v2 host.
cgroup_dir_of() {
	local rel
	rel=$(awk -F: -v c="$2" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' \
		"/proc/$1/cgroup")
	if [[ -n $rel ]]; then
		echo "/sys/fs/cgroup/$2$rel"
	elif [[ -f /sys/fs/cgroup/cgroup.controllers ]]; then
		echo "/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$1/cgroup")"
	fi
}

# memory_limit_of PID: the memory limit of PID's cgroup, in bytes.
memory_limit_of() {
	local d
	d=$(cgroup_dir_of "$1" memory)
	if [[ -f $d/memory.limit_in_bytes ]]; then
		cat "$d/memory.limit_in_bytes"
	else
		cat "$d/memory.max"
	fi
}

# wait_for_ready CMD...: poll `CMD` (e.g. dk logs ID) until it prints "ready".
wait_for_ready() {
	local n=100
	while ((n-- > 0)); do
		[[ $("$@" 2>&1) == *ready* ]] && return 0
		sleep 0.1
	done
	fail "the container never printed 'ready': $("$@" 2>&1)"
}
