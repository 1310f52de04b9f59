#!/usr/bin/env bats
# Capabilities: the five sets, ambient caps for non-root, unknown names.

load helpers

# set_caps JSON: process.capabilities = JSON
set_caps() {
	update_config ".process.capabilities = $1"
}

show_caps='grep -E "^Cap(Inh|Prm|Eff|Bnd|Amb):" /proc/self/status'

# cap_line NAME: the value of CapNAME in $output
cap_line() {
	local line
	for line in "${lines[@]}"; do
		if [[ $line == "Cap$1:"* ]]; then
			echo "${line##*[[:space:]]}"
			return
		fi
	done
}

@test "caps: only CAP_CHOWN gives CapEff 0x1" {
	set_caps '{bounding: ["CAP_CHOWN"], effective: ["CAP_CHOWN"], permitted: ["CAP_CHOWN"], inheritable: [], ambient: []}'
	set_cmd "$show_caps"
	ar_ok run "$CID"
	assert_eq "$(cap_line Eff)" 0000000000000001 CapEff
	assert_eq "$(cap_line Prm)" 0000000000000001 CapPrm
	assert_eq "$(cap_line Bnd)" 0000000000000001 CapBnd
	assert_eq "$(cap_line Inh)" 0000000000000000 CapInh
	assert_eq "$(cap_line Amb)" 0000000000000000 CapAmb
}

@test "caps: runc's default set (AUDIT_WRITE, KILL, NET_BIND_SERVICE)" {
	set_caps '{bounding: ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		effective: ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"],
		permitted: ["CAP_AUDIT_WRITE", "CAP_KILL", "CAP_NET_BIND_SERVICE"]}'
	set_cmd "$show_caps"
	ar_ok run "$CID"
	assert_eq "$(cap_line Eff)" 0000000020000420 CapEff
	assert_eq "$(cap_line Bnd)" 0000000020000420 CapBnd
}

@test "caps: no capabilities at all" {
	set_caps '{bounding: [], effective: [], permitted: [], inheritable: [], ambient: []}'
	set_cmd "$show_caps"
	ar_ok run "$CID"
	assert_eq "$(cap_line Eff)" 0000000000000000 CapEff
	assert_eq "$(cap_line Bnd)" 0000000000000000 CapBnd
}

@test "caps: a missing capabilities object means none" {
	update_config 'del(.process.capabilities)'
	set_cmd "$show_caps"
	ar_ok run "$CID"
	assert_eq "$(cap_line Eff)" 0000000000000000 CapEff
}

@test "caps: CAP_CHOWN lets root chown, its absence stops it" {
	set_caps '{bounding: ["CAP_CHOWN"], effective: ["CAP_CHOWN"], permitted: ["CAP_CHOWN"]}'
	set_cmd 'touch /dev/shm/f && chown 1000 /dev/shm/f 2>&1 && echo chowned; true'
	ar_ok run "$CID"
	assert_output_contains chowned

	set_caps '{bounding: ["CAP_KILL"], effective: ["CAP_KILL"], permitted: ["CAP_KILL"]}'
	ar_ok run "$(new_id)"
	assert_output_not_contains chowned
	assert_output_contains "Operation not permitted"
}

@test "caps: the last capability the kernel knows is accepted" {
	set_caps '{bounding: ["CAP_CHECKPOINT_RESTORE", "CAP_BPF", "CAP_PERFMON"], effective: [], permitted: []}'
	set_cmd "$show_caps"
	ar_ok run "$CID"
	# bits 38-40
	assert_eq "$(cap_line Bnd)" 000001c000000000 CapBnd
}

@test "caps: a non-root user gets its ambient capabilities" {
	set_caps '{bounding: ["CAP_NET_BIND_SERVICE"], effective: ["CAP_NET_BIND_SERVICE"],
		permitted: ["CAP_NET_BIND_SERVICE"], inheritable: ["CAP_NET_BIND_SERVICE"],
		ambient: ["CAP_NET_BIND_SERVICE"]}'
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_cmd "id -u; $show_caps"
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 1000
	assert_eq "$(cap_line Amb)" 0000000000000400 CapAmb
	assert_eq "$(cap_line Eff)" 0000000000000400 CapEff
}

@test "caps: a non-root user without ambient capabilities has none effective" {
	set_caps '{bounding: ["CAP_CHOWN"], effective: ["CAP_CHOWN"], permitted: ["CAP_CHOWN"]}'
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_cmd "$show_caps"
	ar_ok run "$CID"
	assert_eq "$(cap_line Eff)" 0000000000000000 CapEff
	assert_eq "$(cap_line Bnd)" 0000000000000001 CapBnd
}

@test "caps: an unknown capability name is an error" {
	agentrun_only "runc 1.1.5 warns and ignores unknown capability names"
	set_caps '{bounding: ["CAP_CHOWN", "CAP_BOGUS"], effective: ["CAP_CHOWN"], permitted: ["CAP_CHOWN"]}'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_output_contains CAP_BOGUS
	assert_no_leftovers "$CID"
}

@test "caps: an unknown capability name in any set is an error" {
	agentrun_only "runc 1.1.5 warns and ignores unknown capability names"
	local set
	for set in effective permitted inheritable ambient; do
		set_caps "{bounding: [\"CAP_CHOWN\"], $set: [\"CAP_NOT_A_CAP\"]}"
		local id
		id=$(new_id)
		ar_detached create "$id"
		[[ $status -ne 0 ]] || fail "$set: unknown capability accepted"
		assert_output_contains CAP_NOT_A_CAP
		assert_no_leftovers "$id"
	done
}

@test "caps: capability names without the CAP_ prefix are an error" {
	agentrun_only "runc 1.1.5 warns and ignores unknown capability names"
	set_caps '{bounding: ["CHOWN"], effective: ["CHOWN"], permitted: ["CHOWN"]}'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}
