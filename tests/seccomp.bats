#!/usr/bin/env bats
# Seccomp: every action, errnoRet, argument filters, architectures, flags.

load helpers

# seccomp_rule ACTION [EXTRA-JSON]: default ALLOW, ACTION for mkdir/mkdirat.
seccomp_rule() {
	update_config '.linux.seccomp = {
		defaultAction: "SCMP_ACT_ALLOW",
		architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		syscalls: [({names: ["mkdir", "mkdirat"], action: $a} + '"${2:-{\}}"')]}' \
		--arg a "$1"
}

# every x86_64 syscall name the kernel headers know
all_syscalls_json() {
	local h=/usr/include/x86_64-linux-gnu/asm/unistd_64.h
	[[ -r $h ]] || h=/usr/include/asm/unistd_64.h
	[[ -r $h ]] || skip "no unistd_64.h (linux-libc-dev) to list the syscalls"
	sed -n 's/^#define __NR_\([a-z0-9_]*\) .*/\1/p' "$h" | jq -R . | jq -s .
}

MKDIR_TRY='mkdir /dev/shm/d 2>&1 && echo made; true'

@test "seccomp: the filter is installed (Seccomp: 2)" {
	seccomp_rule SCMP_ACT_ERRNO
	set_cmd 'grep -E "^Seccomp:" /proc/self/status'
	ar_ok run "$CID"
	[[ ${lines[-1]} =~ ^Seccomp:[[:space:]]+2$ ]]
}

@test "seccomp: without a seccomp section there is no filter" {
	set_cmd 'grep -E "^Seccomp:" /proc/self/status'
	ar_ok run "$CID"
	[[ ${lines[-1]} =~ ^Seccomp:[[:space:]]+0$ ]]
}

@test "seccomp: SCMP_ACT_ERRNO defaults to EPERM" {
	seccomp_rule SCMP_ACT_ERRNO
	set_cmd "$MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains "Operation not permitted"
	assert_output_not_contains made
}

@test "seccomp: SCMP_ACT_ERRNO with errnoRet" {
	# 100 is ENETDOWN
	seccomp_rule SCMP_ACT_ERRNO '{"errnoRet": 100}'
	set_cmd "$MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains "Network is down"
}

@test "seccomp: the same filter without the rule lets mkdir through" {
	seccomp_rule SCMP_ACT_ALLOW
	set_cmd "$MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains made
}

# mkdir runs as a child of sh; print how it ended
CHILD_TRY='mkdir /dev/shm/d; echo "rc=$?"; test -d /dev/shm/d && echo made; true'

@test "seccomp: SCMP_ACT_KILL kills with SIGSYS" {
	seccomp_rule SCMP_ACT_KILL
	set_cmd "$CHILD_TRY"
	ar_ok run "$CID"
	assert_output_not_contains made
	assert_output_contains "rc=159"
}

@test "seccomp: SCMP_ACT_KILL_PROCESS kills with SIGSYS" {
	seccomp_rule SCMP_ACT_KILL_PROCESS
	set_cmd "$CHILD_TRY"
	ar_ok run "$CID"
	assert_output_not_contains made
	assert_output_contains "rc=159"
}

@test "seccomp: SCMP_ACT_KILL_THREAD kills with SIGSYS" {
	seccomp_rule SCMP_ACT_KILL_THREAD
	set_cmd "$CHILD_TRY"
	ar_ok run "$CID"
	assert_output_not_contains made
	assert_output_contains "rc=159"
}

@test "seccomp: SCMP_ACT_TRAP delivers SIGSYS" {
	seccomp_rule SCMP_ACT_TRAP
	set_cmd "$CHILD_TRY"
	ar_ok run "$CID"
	assert_output_not_contains made
	assert_output_contains "rc=159"
}

@test "seccomp: SCMP_ACT_LOG allows and logs" {
	seccomp_rule SCMP_ACT_LOG
	set_cmd "$MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains made
}

@test "seccomp: default SCMP_ACT_ERRNO with an allow list" {
	local all
	all=$(all_syscalls_json | jq -c 'map(select(. != "mkdir" and . != "mkdirat"))')
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ERRNO",
		architectures: ["SCMP_ARCH_X86_64"],
		syscalls: [{names: $all, action: "SCMP_ACT_ALLOW"}]}' --argjson all "$all"
	set_cmd "echo alive; $MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains alive
	assert_output_contains "Operation not permitted"
}

@test "seccomp: defaultErrnoRet" {
	local all
	all=$(all_syscalls_json | jq -c 'map(select(. != "mkdir" and . != "mkdirat"))')
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ERRNO", defaultErrnoRet: 100,
		architectures: ["SCMP_ARCH_X86_64"],
		syscalls: [{names: $all, action: "SCMP_ACT_ALLOW"}]}' --argjson all "$all"
	set_cmd "$MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains "Network is down"
}

# signal tests: kill(2)'s second argument is the signal
SIG_TRY='trap "" USR1 USR2 WINCH
	kill -USR1 $$ 2>&1 && echo usr1-ok
	kill -USR2 $$ 2>&1 && echo usr2-ok
	kill -WINCH $$ 2>&1 && echo winch-ok
	kill -0 $$ 2>&1 && echo zero-ok; true'

kill_rule() {
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["kill"], action: "SCMP_ACT_ERRNO", args: '"$1"'}]}'
	set_cmd "$SIG_TRY"
}

@test "seccomp: argument filter SCMP_CMP_EQ" {
	kill_rule '[{index: 1, value: 10, op: "SCMP_CMP_EQ"}]'
	ar_ok run "$CID"
	assert_output_not_contains usr1-ok
	assert_output_contains usr2-ok
	assert_output_contains winch-ok
	assert_output_contains zero-ok
}

@test "seccomp: argument filter SCMP_CMP_NE" {
	kill_rule '[{index: 1, value: 10, op: "SCMP_CMP_NE"}]'
	ar_ok run "$CID"
	assert_output_contains usr1-ok
	assert_output_not_contains usr2-ok
	assert_output_not_contains zero-ok
}

@test "seccomp: argument filters SCMP_CMP_GT, GE, LT, LE" {
	# USR1=10 USR2=12 WINCH=28 0=0
	kill_rule '[{index: 1, value: 12, op: "SCMP_CMP_GT"}]'
	ar_ok run "$CID"
	[[ $output == *usr1-ok* && $output == *usr2-ok* && $output != *winch-ok* && $output == *zero-ok* ]] || fail "GT: $output"

	kill_rule '[{index: 1, value: 12, op: "SCMP_CMP_GE"}]'
	ar_ok run "$(new_id)"
	[[ $output == *usr1-ok* && $output != *usr2-ok* && $output != *winch-ok* && $output == *zero-ok* ]] || fail "GE: $output"

	kill_rule '[{index: 1, value: 10, op: "SCMP_CMP_LT"}]'
	ar_ok run "$(new_id)"
	[[ $output == *usr1-ok* && $output == *usr2-ok* && $output == *winch-ok* && $output != *zero-ok* ]] || fail "LT: $output"

	kill_rule '[{index: 1, value: 10, op: "SCMP_CMP_LE"}]'
	ar_ok run "$(new_id)"
	[[ $output != *usr1-ok* && $output == *usr2-ok* && $output == *winch-ok* && $output != *zero-ok* ]] || fail "LE: $output"
}

@test "seccomp: argument filter SCMP_CMP_MASKED_EQ" {
	# value is the mask, valueTwo the datum (libseccomp's order):
	# sig & 0x18 == 0x08 matches 10 (0b01010) and 12 (0b01100), not 28 or 0
	kill_rule '[{index: 1, value: 24, valueTwo: 8, op: "SCMP_CMP_MASKED_EQ"}]'
	ar_ok run "$CID"
	assert_output_not_contains usr1-ok
	assert_output_not_contains usr2-ok
	assert_output_contains winch-ok
	assert_output_contains zero-ok
}

@test "seccomp: two args on one rule must both match" {
	# kill(pid, sig): pid == 1 and sig == 10 -> only kill -USR1 1 is denied
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW",
		syscalls: [{names: ["kill"], action: "SCMP_ACT_ERRNO",
			args: [{index: 0, value: 1, op: "SCMP_CMP_EQ"}, {index: 1, value: 10, op: "SCMP_CMP_EQ"}]}]}'
	set_cmd 'trap "" USR1 USR2
		sh -c "trap \"\" USR1; kill -USR1 \$\$ && echo child-ok"
		kill -USR2 1 && echo usr2-ok
		kill -USR1 1 2>&1 && echo one-ok; true'
	ar_ok run "$CID"
	assert_output_contains child-ok
	assert_output_contains usr2-ok
	assert_output_not_contains one-ok
}

@test "seccomp: flags are accepted" {
	not_on runc "runc 1.1.5 refuses seccomp flags (\"not yet supported\")"
	seccomp_rule SCMP_ACT_ERRNO
	update_config '.linux.seccomp.flags = ["SECCOMP_FILTER_FLAG_LOG", "SECCOMP_FILTER_FLAG_SPEC_ALLOW"]'
	set_cmd "$MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains "Operation not permitted"
}

@test "seccomp: the filter applies with noNewPrivileges false" {
	seccomp_rule SCMP_ACT_ERRNO
	update_config '.process.noNewPrivileges = false'
	set_cmd "$MKDIR_TRY"
	ar_ok run "$CID"
	assert_output_contains "Operation not permitted"
}

@test "seccomp: the filter applies to a non-root user" {
	seccomp_rule SCMP_ACT_ERRNO '{"errnoRet": 100}'
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.noNewPrivileges = true'
	set_cmd 'mkdir /tmp/d 2>&1; true'
	ar_ok run "$CID"
	assert_output_contains "Network is down"
}

@test "seccomp: an unknown action is an error" {
	seccomp_rule SCMP_ACT_BOGUS
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "seccomp: an unknown operator is an error" {
	kill_rule '[{index: 1, value: 10, op: "SCMP_CMP_BOGUS"}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "seccomp: an unknown architecture is an error" {
	seccomp_rule SCMP_ACT_ERRNO
	update_config '.linux.seccomp.architectures = ["SCMP_ARCH_BOGUS"]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}
