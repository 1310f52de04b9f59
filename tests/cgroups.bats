#!/usr/bin/env bats
# Cgroup resources on v1, hybrid and v2: each value lands in the container's
# cgroup, found through /proc/<init pid>/cgroup; the cgroup goes on delete.

load helpers

# start_with_resources JSON: run -d a sleeping container with these resources.
start_with_resources() {
	update_config ".linux.resources += $1 | .process.args = [\"sleep\", \"100\"]"
	run_detached_ok "$CID"
	wait_for_state "$CID" running
}

# cg_read CONTROLLER FILE: a file of the container's cgroup for CONTROLLER.
cg_read() {
	local dir
	dir=$(container_cgroup "$CID" "$1") || fail "no $1 cgroup for $CID"
	[[ -e $dir/$2 ]] || fail "$dir/$2 does not exist"
	cat "$dir/$2"
}

# on_v2 CONTROLLER: CONTROLLER is handled by a cgroup2 hierarchy.
on_v2() {
	[[ $(cgroup_mountpoint "$1") != "" ]] && [[ -e "$(cgroup_mountpoint "$1")/cgroup.controllers" ]]
}

# remove_cgroup_dirs NAME: rmdir every cgroup dir called NAME (test cleanup).
remove_cgroup_dirs() {
	local d
	for d in $(find /sys/fs/cgroup -mindepth 2 -depth -type d -name "$1" 2>/dev/null); do
		rmdir "$d" 2>/dev/null || true
	done
}

@test "cgroups: the container's cgroup is nested under the caller's" {
	start_with_resources '{}'
	local ctrl mine theirs
	for ctrl in memory pids cpu; do
		[[ -n $(cgroup_mountpoint "$ctrl") ]] || continue
		mine=$(cgroup_dir $$ "$ctrl")
		theirs=$(container_cgroup "$CID" "$ctrl")
		[[ $theirs == "$mine"/* ]] || fail "$ctrl: $theirs is not under $mine"
		[[ $theirs == *"$CID"* ]] || fail "$ctrl: $theirs does not name the container"
	done
}

@test "cgroups: memory limit, reservation and swap" {
	requires_cgroup memory
	start_with_resources '{memory: {limit: 67108864, reservation: 33554432, swap: 134217728}}'
	if on_v2 memory; then
		assert_eq "$(cg_read memory memory.max)" 67108864
		assert_eq "$(cg_read memory memory.low)" 33554432
		# v2 takes swap alone: swap - limit
		assert_eq "$(cg_read memory memory.swap.max)" 67108864
	else
		assert_eq "$(cg_read memory memory.limit_in_bytes)" 67108864
		assert_eq "$(cg_read memory memory.soft_limit_in_bytes)" 33554432
		local dir
		dir=$(container_cgroup "$CID" memory)
		if [[ -e $dir/memory.memsw.limit_in_bytes ]]; then
			assert_eq "$(cat "$dir/memory.memsw.limit_in_bytes")" 134217728
		fi
	fi
}

@test "cgroups: memory limit -1 means unlimited" {
	requires_cgroup memory
	start_with_resources '{memory: {limit: -1}}'
	if on_v2 memory; then
		assert_eq "$(cg_read memory memory.max)" max
	else
		# the v1 "unlimited" value, page aligned
		(($(cg_read memory memory.limit_in_bytes) > 1 << 60))
	fi
}

@test "cgroups: pids limit is set and enforced" {
	requires_cgroup pids
	update_config '.linux.resources.pids = {limit: 10}'
	# the inner sh dies when fork fails; it counts the sleeps it started
	# with a builtin, so the count survives
	set_cmd 'sh -c "n=0; for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do sleep 2 & n=\$((n + 1)); echo \$n > /out/count; done" 2>/dev/null; echo done'
	ar run "$CID"
	local n
	n=$(cat "$OUT/count")
	((n > 0 && n < 10)) || fail "pids limit not enforced: $n sleeps started"

	start_with_resources '{pids: {limit: 42}}'
	assert_eq "$(cg_read pids pids.max)" 42
}

@test "cgroups: cpu shares, quota and period" {
	requires_cgroup cpu
	start_with_resources '{cpu: {shares: 512, quota: 50000, period: 100000}}'
	if on_v2 cpu; then
		assert_eq "$(cg_read cpu cpu.max)" "50000 100000"
		# runc's conversion: 1 + ((shares - 2) * 9999) / 262142
		assert_eq "$(cg_read cpu cpu.weight)" 20
	else
		assert_eq "$(cg_read cpu cpu.shares)" 512
		assert_eq "$(cg_read cpu cpu.cfs_quota_us)" 50000
		assert_eq "$(cg_read cpu cpu.cfs_period_us)" 100000
	fi
}

@test "cgroups: cpu weight (spec 1.2 field) or shares" {
	is_cgroup2 || skip "cpu.weight is the cgroup v2 knob"
	not_on runc "runc 1.1 has no linux.resources.cpu.weight"
	start_with_resources '{cpu: {weight: 250}}'
	assert_eq "$(cg_read cpu cpu.weight)" 250
}

@test "cgroups: cpuset cpus and mems" {
	requires_cgroup cpuset
	start_with_resources '{cpu: {cpus: "0", mems: "0"}}'
	assert_eq "$(cg_read cpuset cpuset.cpus)" 0
	assert_eq "$(cg_read cpuset cpuset.mems)" 0
}

@test "cgroups: blkio / io weight" {
	requires_cgroup blkio
	start_with_resources '{blockIO: {weight: 300}}'
	local dir
	dir=$(container_cgroup "$CID" blkio)
	if [[ -e $dir/blkio.weight ]]; then
		assert_eq "$(cat "$dir/blkio.weight")" 300
	elif [[ -e $dir/blkio.bfq.weight ]]; then
		assert_eq "$(cat "$dir/blkio.bfq.weight")" 300
	elif [[ -e $dir/io.bfq.weight ]]; then
		[[ $(cat "$dir/io.bfq.weight") == *300* ]]
	elif [[ -e $dir/io.weight ]]; then
		# runc's conversion: 1 + (weight - 10) * 9999 / 990
		[[ $(cat "$dir/io.weight") == *2930* ]]
	else
		skip "no blkio/io weight file on this kernel"
	fi
}

@test "cgroups: hugetlb limit" {
	requires_cgroup hugetlb
	[[ -d /sys/kernel/mm/hugepages/hugepages-2048kB ]] || skip "no 2MB huge pages"
	if ! is_cgroup2 && on_v2 hugetlb; then
		not_on runc "runc 1.1.5 cannot set hugetlb when it is only on the unified hierarchy of a hybrid setup"
	fi
	start_with_resources '{hugepageLimits: [{pageSize: "2MB", limit: 4194304}]}'
	local dir
	dir=$(container_cgroup "$CID" hugetlb)
	if [[ -e $dir/hugetlb.2MB.max ]]; then
		assert_eq "$(cat "$dir/hugetlb.2MB.max")" 4194304
	else
		assert_eq "$(cat "$dir/hugetlb.2MB.limit_in_bytes")" 4194304
	fi
}

@test "cgroups: devices cgroup lists the allowed devices (v1)" {
	requires_cgroup devices
	is_cgroup2 && skip "cgroup v2 uses an eBPF program (checked by devices.bats)"
	start_with_resources '{devices: [{allow: false, access: "rwm"}, {allow: true, type: "c", major: 1, minor: 2, access: "r"}]}'
	local list
	list=$(cg_read devices devices.list)
	[[ $list == *"c 1:3 rwm"* ]] || fail "null not allowed: $list"
	[[ $list == *"c 1:2 r"* ]] || fail "config rule missing: $list"
	[[ $list != *"a *:* rwm"* ]] || fail "everything allowed: $list"
}

@test "cgroups: unified resources (cgroup v2)" {
	is_cgroup2 || skip "linux.resources.unified needs cgroup v2 (this machine is $(is_cgroup2 || echo hybrid/v1))"
	start_with_resources '{unified: {"pids.max": "17", "memory.high": "50000000"}}'
	assert_eq "$(cg_read pids pids.max)" 17
	[[ $(cg_read memory memory.high) == 4999* ]]
}

@test "cgroups: unified resources on cgroup v1 are an error" {
	is_cgroup2 && skip "this machine has cgroup v2"
	update_config '.linux.resources.unified = {"pids.max": "17"}'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "cgroups: a relative cgroupsPath is created under the caller's cgroup and removed" {
	local parent
	parent="artest$(printf '%04x' $RANDOM)"
	on_teardown "remove_cgroup_dirs $parent"
	update_config '.linux.cgroupsPath = $p' --arg p "$parent/$CID"
	start_with_resources '{pids: {limit: 33}}'
	local dir
	dir=$(container_cgroup "$CID" pids)
	[[ $dir == "$(cgroup_dir $$ pids)/$parent/$CID" ]] || fail "cgroup at $dir"
	assert_eq "$(cat "$dir/pids.max")" 33
	ar_ok delete --force "$CID"
	[[ ! -d $dir ]]
}

@test "cgroups: every cgroup dir is removed on delete" {
	start_with_resources '{memory: {limit: 67108864}, pids: {limit: 50}}'
	local pid dirs=() ctrl d
	pid=$(init_pid "$CID")
	while IFS=: read -r _ ctrl _; do
		ctrl=${ctrl#name=}
		[[ -n $ctrl ]] || ctrl=unified
		ctrl=${ctrl%%,*}
		if d=$(cgroup_dir "$pid" "$ctrl") && [[ $d == *"$CID"* ]]; then
			dirs+=("$d")
		fi
	done <"/proc/$pid/cgroup"
	((${#dirs[@]} > 0))
	ar_ok delete --force "$CID"
	for d in "${dirs[@]}"; do
		[[ ! -d $d ]] || fail "cgroup $d left after delete"
	done
	assert_no_leftovers "$CID"
}

@test "cgroups: the cgroup of a created container exists before start" {
	update_config '.linux.resources.pids = {limit: 21}'
	update_config '.process.args = ["sleep", "100"]'
	create_ok "$CID"
	assert_eq "$(cg_read pids pids.max)" 21
	ar_ok delete "$CID"
	assert_no_leftovers "$CID"
}

@test "cgroups: --systemd-cgroup maps slice:prefix:name to systemd's cgroupfs path" {
	agentrun_only "runc and crun need a running systemd for --systemd-cgroup"
	local slice
	slice="ar-t$(printf '%04x' $RANDOM)"
	on_teardown "remove_cgroup_dirs $slice.slice; remove_cgroup_dirs ar.slice"
	update_config '.linux.cgroupsPath = $p | .process.args = ["sleep", "100"]' --arg p "$slice.slice:agentrun:$CID"
	ar_detached --systemd-cgroup run -d "$CID"
	assert_status 0
	local dir
	dir=$(container_cgroup "$CID" pids)
	[[ $dir == */ar.slice/$slice.slice/agentrun-$CID.scope ]] || fail "cgroup at $dir"
}
