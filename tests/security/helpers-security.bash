# shellcheck shell=bash
# Helpers for tests/security/*.bats: the hardening of agent containers, proven from the inside
# with the static probe (tests/security/probe.c), and the policy layer seen from the outside.
#
# Every test gets, under $BATS_TEST_TMPDIR:
#   state/        the runtime's --root
#   audit/        the audit dir of every host policy the tests write (never /var/log/agentrun)
#   policy.json   the host policy in force: the compiled-in defaults plus the audit dir
#   bundle/       a busybox rootfs with /bin/probe, and config.json as write_config left it
# Two caller configs (write_config default|weak):
#   default  `agentrun spec`, made non-interactive
#   weak     `docker run --privileged`-lite: the host's network (no netns), a writable rootfs,
#            Docker's 14 default capabilities plus CAP_SYS_ADMIN in every set, no seccomp, no
#            resources, no masked or readonly paths, no rlimits, no_new_privileges off, and /sys
#            and /sys/fs/cgroup mounted read-write.
# Teardown deletes every container and fails the test if a state dir, cgroup, process,
# interface or audit file outside audit/ is left behind.
#
# No test sends a packet: network isolation is read from interfaces, routes and netns inodes.

SEC_DIR=$(cd "$BATS_TEST_DIRNAME" && pwd)
TOP_DIR=$(cd "$SEC_DIR/../.." && pwd)
RUNTIME=${RUNTIME:-$TOP_DIR/agentrun}
BUSYBOX=${BUSYBOX:-/bin/busybox}
AR_TIMEOUT=${AR_TIMEOUT:-60}

# Docker's default capability set, and the agent allowlist as a CapEff mask.
DOCKER_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FSETID","CAP_FOWNER","CAP_MKNOD","CAP_NET_RAW",
"CAP_SETGID","CAP_SETUID","CAP_SETFCAP","CAP_SETPCAP","CAP_NET_BIND_SERVICE","CAP_SYS_CHROOT",
"CAP_KILL","CAP_AUDIT_WRITE"]'
AGENT_CAPS='["CAP_CHOWN","CAP_DAC_OVERRIDE","CAP_FOWNER","CAP_FSETID","CAP_KILL","CAP_SETGID",
"CAP_SETUID","CAP_NET_BIND_SERVICE"]'

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

assert_output_not_contains() {
	[[ $output != *"$1"* ]] || fail "expected the output not to contain '$1', got: $output"
}

assert_eq() {
	[[ $1 == "$2" ]] || fail "${3:-value}: expected '$2', got '$1'"
}

# ---------------------------------------------------------------------------------------------
# the probe and the rootfs, built once per file

# The probe binary: the tree's if it is newer than its source, else one built for this file.
_probe_binary() {
	local p=$SEC_DIR/probe
	if [[ -x $p && ! $SEC_DIR/probe.c -nt $p ]] && file_is_static "$p"; then
		echo "$p"
		return 0
	fi
	p=$BATS_FILE_TMPDIR/probe
	[[ -x $p ]] || gcc -static -O2 -Wall -Wextra -Wno-unused-parameter -o "$p" "$SEC_DIR/probe.c" >&2 ||
		return 1
	echo "$p"
}

file_is_static() {
	! LC_ALL=C readelf -l "$1" 2>/dev/null | grep -q 'INTERP'
}

# A busybox rootfs with the probe, shared by the tests of one file (each copies it).
sec_setup_file() {
	[[ $EUID -eq 0 ]] || fail "the security tests must run as root"
	[[ -x $RUNTIME ]] || fail "runtime '$RUNTIME' is not an executable: build it first"
	local root=$BATS_FILE_TMPDIR/rootfs probe d
	probe=$(_probe_binary) || fail "cannot build tests/security/probe"
	for d in bin sbin usr/bin usr/sbin etc proc sys dev tmp root hp; do
		mkdir -p "$root/$d"
	done
	cp "$BUSYBOX" "$root/bin/busybox"
	chroot "$root" /bin/busybox --install -s
	cp "$probe" "$root/bin/probe"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\n' >"$root/etc/group"
	chmod 1777 "$root/tmp"
}

setup_file() { sec_setup_file; }

# ---------------------------------------------------------------------------------------------
# setup and teardown

sec_setup() {
	TMP=$BATS_TEST_TMPDIR
	AR_ROOT=$TMP/state
	AUDIT_DIR=$TMP/audit
	BUNDLE=$TMP/bundle
	POLICY=$TMP/policy.json
	mkdir -p "$AR_ROOT" "$AUDIT_DIR" "$BUNDLE"
	# let the container's root walk down to the bundle
	local d=$TMP
	while [[ $d == /tmp/?* ]]; do
		chmod a+x "$d"
		d=$(dirname "$d")
	done
	: >"$TMP/.ids"
	: >"$TMP/.cleanup"
	cp -a "$BATS_FILE_TMPDIR/rootfs" "$BUNDLE/rootfs"
	write_policy '{}'
	HOST_NETNS=$(readlink /proc/self/ns/net)
	CID=$(new_id)
	cd "$BUNDLE" || return 1
}

sec_teardown() {
	local id rc=0
	cd "$TMP" || true
	for id in $(_known_ids); do
		_ar delete --force "$id" >/dev/null 2>&1 || true
	done
	_run_cleanups
	for id in $(_known_ids); do
		assert_no_leftovers "$id" || rc=1
	done
	return $rc
}

setup() { sec_setup; }
teardown() { sec_teardown; }

# on_teardown COMMAND: eval'ed at teardown, after the containers are gone, newest first.
on_teardown() {
	echo "$*" >>"$TMP/.cleanup"
}

_run_cleanups() {
	local cmds=() i
	mapfile -t cmds <"$TMP/.cleanup"
	for ((i = ${#cmds[@]} - 1; i >= 0; i--)); do
		eval "${cmds[i]}" || true
	done
	: >"$TMP/.cleanup"
}

new_id() {
	local id
	id="sec$(printf '%04x%04x' $RANDOM $RANDOM)"
	echo "$id" >>"$TMP/.ids"
	echo "$id"
}

_known_ids() {
	{
		cat "$TMP/.ids"
		_ar list -q 2>/dev/null
	} | sort -u
}

# assert_no_leftovers ID: no state dir, cgroup or process of ID, and its audit log, if any, is
# in the test's audit dir and not in /var/log/agentrun.
assert_no_leftovers() {
	local id=$1 bad=() hit procs
	# expanded here, before the grep below exists, so that it does not find itself
	procs=(/proc/[0-9]*/cmdline)
	[[ ! -e $AR_ROOT/$id ]] || bad+=("state dir $AR_ROOT/$id")
	hit=$(find /sys/fs/cgroup -mindepth 2 -maxdepth 6 -type d -name "$id" 2>/dev/null | head -3)
	[[ -z $hit ]] || bad+=("cgroups: $hit")
	hit=$(grep -l -a -F -- "$id" "${procs[@]}" 2>/dev/null | grep -v "^/proc/$$/" | head -3)
	if [[ -n $hit ]]; then
		local f
		for f in $hit; do
			bad+=("process ${f//[!0-9]/}: $(tr '\0' ' ' <"$f" 2>/dev/null)")
		done
	fi
	[[ ! -e /var/log/agentrun/$id.jsonl ]] || bad+=("audit log in /var/log/agentrun")
	if ((${#bad[@]})); then
		printf 'leftover of %s: %s\n' "$id" "${bad[@]}" >&2
		return 1
	fi
}

# ---------------------------------------------------------------------------------------------
# the runtime

_ar() {
	timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" --policy "$POLICY" "$@"
}

# ar ARGS: the runtime under bats `run`, with this test's --root and host policy.
ar() {
	run _ar "$@"
	echo "# agentrun $* -> $status" >&2
	[[ -z $output ]] || printf '%s\n' "$output" >&2
}

ar_ok() {
	ar "$@"
	[[ $status -eq 0 ]] || fail "agentrun $* failed with $status: $output"
}

# ar_bg ARGS... ID: create or run -d; the container's stdio goes to a file, not to bats' pipes.
ar_bg() {
	local log=$TMP/stdio-${*: -1}
	status=0
	# a fresh file for each call: the output of an earlier call with the same ID must not count
	rm -f "$log"
	_ar "$@" </dev/null >"$log" 2>&1 || status=$?
	output=$(cat "$log")
	echo "# agentrun $* -> $status" >&2
	[[ -z $output ]] || printf '%s\n' "$output" >&2
}

ar_bg_ok() {
	ar_bg "$@"
	[[ $status -eq 0 ]] || fail "agentrun $* failed with $status: $output"
}

# write_policy JSON: the host policy in force, with this test's audit dir unless JSON has one.
write_policy() {
	jq --arg a "$AUDIT_DIR" '.audit = ({dir: $a} + (.audit // {}))' <<<"$1" >"$POLICY" ||
		fail "bad policy JSON in the test: $1"
}

# The passthrough policy of contrib/, audit dir moved into the test.
write_passthrough_policy() {
	write_policy "$(cat "$TOP_DIR/contrib/policy/passthrough.json")"
}

# update_config JQ-EXPR [JQ-ARGS...]: edit the bundle's config.json in place.
update_config() {
	local expr=$1
	shift
	jq "$@" "$expr" "$BUNDLE/config.json" >"$BUNDLE/config.json.new" &&
		mv "$BUNDLE/config.json.new" "$BUNDLE/config.json"
}

# write_config default|weak: one of the two caller configs (see the top of this file).
write_config() {
	rm -f "$BUNDLE/config.json"
	(cd "$BUNDLE" && "$RUNTIME" spec) || fail "agentrun spec failed"
	update_config '.process.terminal = false | .process.args = ["true"]'
	case $1 in
	default) ;;
	weak)
		update_config '
			.root.readonly = false
			| .linux.namespaces |= map(select(.type != "network"))
			| .process.capabilities = {bounding: $c, effective: $c, permitted: $c,
				inheritable: $c, ambient: $c}
			| .process.noNewPrivileges = false
			| del(.process.rlimits, .linux.seccomp, .linux.resources, .linux.maskedPaths,
				.linux.readonlyPaths)
			| .mounts |= map(if .destination == "/sys" or .destination == "/sys/fs/cgroup"
				then .options = ((.options // []) - ["ro"] + ["rw"]) else . end)' \
			--argjson c "$(jq -c '. + ["CAP_SYS_ADMIN"]' <<<"$DOCKER_CAPS")"
		;;
	*) fail "write_config: unknown config '$1'" ;;
	esac
}

# set_args ARG...: the container's process.args.
set_args() {
	local a='[]' x
	# one at a time: jq takes a "-c" after --args for its own option
	for x; do
		a=$(jq -c --arg x "$x" '. + [$x]' <<<"$a")
	done
	update_config '.process.args = $a' --argjson a "$a"
}

# annotate KEY=VALUE...: run.agentrun.KEY annotations (KEY given without the prefix).
annotate() {
	local kv
	for kv; do
		update_config '.annotations[$k] = $v' --arg k "run.agentrun.${kv%%=*}" --arg v "${kv#*=}"
	done
}

# probe_in CONFIG CHECK [ARGS...]: run `probe CHECK ARGS` as the job of CONFIG; it must say ok.
probe_in() {
	local config=$1
	shift
	write_config "$config"
	set_args probe "$@"
	ar run "$CID"
	[[ $status -eq 0 && $output == *"ok $1"* ]] ||
		fail "probe $* under the $config config: status $status: $output"
}

# state_pid ID
state_pid() {
	_ar state "$1" | jq -r .pid
}

# inspect ID FILTER: a jq filter over `agentrun inspect ID`.
inspect() {
	_ar inspect "$1" | jq -c "$2"
}

# verdict ID CONTROL: the inspect verdicts of one control, space-separated.
verdict() {
	_ar inspect "$1" | jq -r --arg c "$2" '[.policy.controls[] | select(.control == $c) | .verdict] | join(" ")'
}

# cgroup_file PID CONTROLLER FILE: the host path of FILE in PID's cgroup (v1, or cgroup2).
cgroup_file() {
	local pid=$1 ctrl=$2 file=$3 mnt path
	mnt=$(awk -v c="$ctrl" '
		{ for (i = 7; $i != "-"; i++) ; fstype = $(i + 1); opts = "," $(i + 3) "," }
		fstype == "cgroup" && index(opts, "," c ",") { print $5; exit }' /proc/self/mountinfo)
	path=$(awk -F: -v c="$ctrl" '{ n = split($2, a, ","); for (i = 1; i <= n; i++) if (a[i] == c) print $3 }' \
		"/proc/$pid/cgroup")
	if [[ -z $mnt ]]; then
		mnt=$(awk '{ for (i = 7; $i != "-"; i++) ; if ($(i + 1) == "cgroup2") { print $5; exit } }' \
			/proc/self/mountinfo)
		path=$(sed -n 's/^0:://p' "/proc/$pid/cgroup")
	fi
	echo "$mnt${path%/}/$file"
}

# ---------------------------------------------------------------------------------------------
# networks made by the tests (never given addresses, never sent traffic)

requires_cmd() {
	local c
	for c; do
		command -v "$c" >/dev/null || skip "needs $c"
	done
}

# short_name PREFIX: an interface or netns name unique to this test (at most 15 characters).
short_name() {
	echo "$1$(printf '%04x' $RANDOM)"
}

# add_fake_link NETNS NAME: an interface in NETNS, a dummy where the kernel has the driver,
# else a bridge (this VM's kernel has no dummy).
add_fake_link() {
	ip -n "$1" link add "$2" type dummy 2>/dev/null || ip -n "$1" link add "$2" type bridge
}
