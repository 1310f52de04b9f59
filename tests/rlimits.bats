#!/usr/bin/env bats
# rlimits: set as asked; clamped (never failing) above the caller's hard limit.

load helpers

@test "rlimits: RLIMIT_NOFILE soft and hard" {
	update_config '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 1000, hard: 2000}]'
	set_cmd 'ulimit -Sn; ulimit -Hn'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 1000 soft
	assert_eq "${lines[1]}" 2000 hard
}

@test "rlimits: several types at once" {
	update_config '.process.rlimits = [
		{type: "RLIMIT_CORE", soft: 0, hard: 0},
		{type: "RLIMIT_NPROC", soft: 500, hard: 600},
		{type: "RLIMIT_STACK", soft: 4194304, hard: 8388608},
		{type: "RLIMIT_MEMLOCK", soft: 65536, hard: 65536}]'
	set_cmd 'grep -E "^Max (core file size|processes|stack size|locked memory)" /proc/self/limits'
	ar_ok run "$CID"
	[[ $output =~ Max\ core\ file\ size\ +0\ +0 ]] || fail "core: $output"
	[[ $output =~ Max\ processes\ +500\ +600 ]] || fail "nproc: $output"
	[[ $output =~ Max\ stack\ size\ +4194304\ +8388608 ]] || fail "stack: $output"
	[[ $output =~ Max\ locked\ memory\ +65536\ +65536 ]] || fail "memlock: $output"
}

@test "rlimits: lowering only: the runtime's own limits do not leak in" {
	update_config '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 64, hard: 64}]'
	set_cmd 'ulimit -Hn'
	ar_ok run "$CID"
	assert_eq "${lines[-1]}" 64
}

@test "rlimits: RLIMIT_NOFILE above the hard limit is clamped and the container starts" {
	not_on runc "runc 1.1.5 fails the start (setrlimit EPERM without CAP_SYS_RESOURCE)"
	requires_cmd setpriv
	update_config '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 1048576, hard: 1048576}]'
	set_cmd 'ulimit -Sn; ulimit -Hn'
	# the runtime runs with a hard limit of 4096 and without CAP_SYS_RESOURCE,
	# so it cannot raise the limit: it must clamp, warn, and go on
	run bash -c 'ulimit -Sn 4096 && ulimit -Hn 4096 &&
		exec setpriv --bounding-set=-sys_resource -- "$@"' _ \
		timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" --log "$BATS_TEST_TMPDIR/log" run "$CID"
	echo "$output" >&2
	assert_status 0
	assert_eq "${lines[-2]}" 4096 soft
	assert_eq "${lines[-1]}" 4096 hard
	grep -qi "rlimit" "$BATS_TEST_TMPDIR/log" || fail "no warning in the log: $(cat "$BATS_TEST_TMPDIR/log")"
}

@test "rlimits: RLIMIT_NOFILE is raised when the caller may raise it" {
	local effhex
	effhex=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
	(((16#$effhex >> 24) & 1)) || skip "the caller lacks CAP_SYS_RESOURCE"
	local want=$(($(ulimit -Hn) + 1))
	update_config '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: $w, hard: $w}]' --argjson w "$want"
	set_cmd 'ulimit -Hn'
	ar_ok run "$CID"
	assert_eq "${lines[-1]}" "$want"
}

@test "rlimits: soft above hard is an error" {
	update_config '.process.rlimits = [{type: "RLIMIT_NOFILE", soft: 2000, hard: 1000}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "rlimits: an unknown type is an error" {
	update_config '.process.rlimits = [{type: "RLIMIT_BOGUS", soft: 1, hard: 1}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_output_contains RLIMIT_BOGUS
	assert_no_leftovers "$CID"
}
