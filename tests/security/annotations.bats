#!/usr/bin/env bats
# run.agentrun.* annotations: a tighten is honoured, a relax only with the host's permission, a
# bad value, an unknown key or a value above the host maximum is an error.

load helpers-security

# create_fails: create must fail and leave nothing behind.
create_fails() {
	ar_bg create "$CID"
	[[ $status -ne 0 ]] || fail "create succeeded: $output"
	assert_no_leftovers "$CID"
	[[ ! -e $AUDIT_DIR/$CID.jsonl ]] || fail "a refused create wrote an audit log"
}

# ---- tighten ---------------------------------------------------------------------------------

@test "tighten: memory=256m pids=64 timeout=30s are in the cgroup files and in inspect" {
	write_config default
	set_args sleep 60
	annotate memory=256m pids=64 timeout=30s
	ar_bg_ok create "$CID"
	local pid
	pid=$(state_pid "$CID")
	assert_eq "$(cat "$(cgroup_file "$pid" pids pids.max)")" 64 "pids.max"
	if [[ -e $(cgroup_file "$pid" memory memory.limit_in_bytes) ]]; then
		assert_eq "$(cat "$(cgroup_file "$pid" memory memory.limit_in_bytes)")" 268435456 "memory limit"
	else
		assert_eq "$(cat "$(cgroup_file "$pid" memory memory.max)")" 268435456 "memory.max"
	fi
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.memory.limit)" 268435456
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.pids.limit)" 64
	assert_eq "$(inspect "$CID" .policy.timeout_s)" 30
	assert_eq "$(verdict "$CID" memory)" tightened
	assert_eq "$(verdict "$CID" pids)" tightened
}

@test "tighten: timeout=2s kills the job after two seconds" {
	write_config default
	set_args sleep 60
	annotate timeout=2s
	local t0=$SECONDS
	ar run "$CID"
	[[ $status -eq 137 ]] || fail "expected the job to be killed (137), got $status: $output"
	((SECONDS - t0 < 20)) || fail "the timeout did not fire in time"
	grep -q '"event":"timeout"' "$AUDIT_DIR/$CID.jsonl" || fail "no timeout in the audit log"
}

@test "tighten: pids=32 stops a fork bomb in the weak config" {
	write_config weak
	annotate pids=32
	set_args probe forkbomb 1000
	ar run "$CID"
	assert_status 0
	local n
	n=$(sed -n 's/^# forked \([0-9]*\) processes.*/\1/p' <<<"$output")
	((n < 32)) || fail "forked $n processes with pids=32"
}

@test "tighten: a config's own lower limit is kept against a higher annotation" {
	write_config default
	update_config '.linux.resources.pids = {limit: 16}'
	annotate pids=400
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.pids.limit)" 16
	assert_eq "$(verdict "$CID" pids)" kept
}

@test "tighten: pids=64 over a config's pids limit of 0 (no limit) gives 64" {
	write_config default
	update_config '.linux.resources.pids = {limit: 0} | .linux.resources.memory = {limit: -1}'
	annotate pids=64 memory=256m
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.pids.limit)" 64
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.memory.limit)" 268435456
	run inspect "$CID" '[.policy.controls[] | select(.control == "pids") | .why]'
	assert_output_contains "annotation run.agentrun.pids"
}

# ---- relax: refused without the host's permission ----------------------------------------------

# relax_refused KEY=VALUE POLICY-KEY
relax_refused() {
	write_config default
	annotate "$1"
	create_fails
	assert_output_contains "run.agentrun.$1"
	assert_output_contains "allow.$2"
}

@test "relax refused: network=inherit names allow.network_inherit" {
	relax_refused network=inherit network_inherit
}

@test "relax refused: rootfs=writable names allow.rootfs_writable" {
	relax_refused rootfs=writable rootfs_writable
}

@test "relax refused: seccomp=off names allow.seccomp_off" {
	relax_refused seccomp=off seccomp_off
}

@test "relax refused: audit=off names allow.audit_off" {
	relax_refused audit=off audit_off
}

# ---- relax: honoured with it ------------------------------------------------------------------

@test "relax allowed: network=inherit gives the weak config the host's netns" {
	write_policy '{"allow": {"network_inherit": true}}'
	write_config weak
	annotate network=inherit
	set_args sh -c 'readlink /proc/self/ns/net'
	ar run "$CID"
	assert_status 0
	assert_output_contains "$HOST_NETNS"
}

# The relax stops the policy from forcing read-only; a config that asks for read-only keeps it.
@test "relax allowed: rootfs=writable lets the job write a rootfs its config made writable" {
	write_policy '{"allow": {"rootfs_writable": true}}'
	write_config weak
	annotate rootfs=writable
	set_args sh -c 'echo yes >/written && cat /written'
	ar run "$CID"
	assert_status 0
	assert_output_contains "yes"
	rm -f "$BUNDLE/rootfs/written"
	write_config default
	annotate rootfs=writable
	set_args sh -c 'echo yes >/written'
	ar run "$CID"
	assert_status 1
	assert_output_contains "Read-only file system"
}

@test "relax allowed: seccomp=off leaves the job without a filter" {
	write_policy '{"allow": {"seccomp_off": true}}'
	write_config default
	annotate seccomp=off
	set_args sh -c 'grep "^Seccomp:" /proc/self/status'
	ar run "$CID"
	assert_status 0
	assert_output_contains "Seccomp:	0"
}

@test "relax allowed: audit=off writes no audit log" {
	write_policy '{"allow": {"audit_off": true}}'
	write_config default
	annotate audit=off
	ar run "$CID"
	assert_status 0
	[[ ! -e $AUDIT_DIR/$CID.jsonl ]] || fail "audit=off still wrote $AUDIT_DIR/$CID.jsonl"
	[[ -z $(ls -A "$AUDIT_DIR") ]] || fail "audit files: $(ls -A "$AUDIT_DIR")"
}

@test "relax allowed, other controls stay: network=inherit keeps the rest hardened" {
	write_policy '{"allow": {"network_inherit": true}}'
	write_config weak
	annotate network=inherit
	set_args probe status
	ar run "$CID"
	assert_status 0
}

# ---- bad values and unknown keys ---------------------------------------------------------------

# bad_annotation KEY=VALUE TEXT: create fails and the error names the annotation.
bad_annotation() {
	write_config default
	annotate "$1"
	create_fails
	assert_output_contains "run.agentrun.${1%%=*}"
	assert_output_contains "$2"
}

@test "bad value: timeout=abc" {
	bad_annotation timeout=abc "duration"
}

@test "bad value: memory=12q" {
	bad_annotation memory=12q "size"
}

@test "bad value: pids=-1, cpus=lots, tmp-size=0, network=maybe" {
	bad_annotation pids=-1 "integer"
	write_config default
	bad_annotation cpus=lots "CPUs"
	write_config default
	bad_annotation tmp-size=0 "size"
	write_config default
	bad_annotation network=maybe '"none" or "inherit"'
}

@test "unknown key: run.agentrun.memroy is an error" {
	bad_annotation memroy=1g "unknown"
}

@test "annotations of other prefixes are left alone" {
	write_config default
	update_config '.annotations = {"run.agentrunner.x": "1", "org.example": "y"}'
	ar run "$CID"
	assert_status 0
}

# ---- above the host maximum ------------------------------------------------------------------

@test "above the maximum: memory, pids, cpus, timeout, tmp-size name their maxima key" {
	write_policy '{"maxima": {"memory": "512m", "pids": 100, "cpus": 1, "timeout": "1m", "tmp_size": "64m"}}'
	local kv key
	for kv in memory=1g:memory pids=101:pids cpus=1.5:cpus timeout=2m:timeout tmp-size=128m:tmp_size; do
		key=${kv##*:}
		kv=${kv%:*}
		write_config default
		annotate "$kv"
		create_fails
		assert_output_contains "run.agentrun.${kv%%=*}"
		assert_output_contains "maxima.$key"
	done
}

@test "at the maximum: memory=512m under a 512m maximum is honoured" {
	write_policy '{"maxima": {"memory": "512m"}}'
	write_config default
	annotate memory=512m
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.memory.limit)" 536870912
}
