#!/usr/bin/env bats
# The policy's edits that a config could try to slip past: devices under a default's name or a
# host-allowed path, sysctls that reach the host, binds of the host's kernel interfaces.

load helpers-security

# ---- devices ------------------------------------------------------------------------------------

@test "devices: a block device named /dev/null is dropped; /dev/null stays the real one" {
	write_config default
	update_config '.linux.devices = [{path: "/dev/null", type: "b", major: 7, minor: 0}]'
	set_args sh -c 'ls -l /dev/null'
	ar_bg_ok create "$CID"
	run inspect "$CID" '[.policy.controls[] | select(.control == "devices") | .why]'
	assert_output_contains "dropped /dev/null (b 7:0)"
	assert_eq "$(inspect "$CID" '[.effective_spec.linux.devices[]? | select(.type == "b")] | length')" 0
	_ar delete --force "$CID"
	ar run "$CID"
	assert_status 0
	[[ $output == c*" 1,"*" 3 "* ]] || fail "/dev/null in the job: $output"
}

@test "devices: a device outside the default set is dropped, and the audit log says so" {
	write_config weak
	update_config '.linux.devices = [{path: "/dev/loop0", type: "b", major: 7, minor: 0},
		{path: "/dev/kmsg", type: "c", major: 1, minor: 11}]'
	set_args sh -c 'ls /dev'
	ar run "$CID"
	assert_status 0
	assert_output_not_contains "loop0"
	assert_output_not_contains "kmsg"
	grep -q 'dropped /dev/loop0' "$AUDIT_DIR/$CID.jsonl" || fail "the audit log does not say: $(cat "$AUDIT_DIR/$CID.jsonl")"
	grep -q 'dropped /dev/kmsg' "$AUDIT_DIR/$CID.jsonl" || fail "the audit log does not say"
}

@test "devices: a host-allowed path is kept only as the host's own node" {
	[[ -c /dev/kmsg ]] || skip "no /dev/kmsg on this host"
	local maj min
	maj=$((16#$(stat -c %t /dev/kmsg)))
	min=$((16#$(stat -c %T /dev/kmsg)))
	write_policy '{"devices": ["/dev/kmsg"]}'
	# the host's disk under the allowed name
	write_config default
	update_config '.linux.devices = [{path: "/dev/kmsg", type: "b", major: 8, minor: 0}]'
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" '[.effective_spec.linux.devices[]?] | length')" 0
	assert_eq "$(inspect "$CID" '[.effective_spec.linux.resources.devices[] | select(.allow and .major == 8)] | length')" 0
	_ar delete --force "$CID"
	# the real node
	write_config default
	update_config '.linux.devices = [{path: "/dev/kmsg", type: "c", major: $a, minor: $i}]' \
		--argjson a "$maj" --argjson i "$min"
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" '[.effective_spec.linux.devices[]?] | length')" 1
	assert_eq "$(inspect "$CID" "[.effective_spec.linux.resources.devices[] | select(.allow and .type == \"c\" and .major == $maj and .minor == $min)] | length >= 1")" true
}

# ---- sysctl -------------------------------------------------------------------------------------

@test "sysctl: net.* is kept in the job's own netns and does not reach the host" {
	local host
	host=$(cat /proc/sys/net/ipv4/ip_default_ttl)
	write_config weak
	update_config '.linux.sysctl = {"net.ipv4.ip_default_ttl": "61"}'
	set_args cat /proc/sys/net/ipv4/ip_default_ttl
	ar run "$CID"
	assert_status 0
	assert_eq "$output" 61 "the job's ip_default_ttl"
	assert_eq "$(cat /proc/sys/net/ipv4/ip_default_ttl)" "$host" "the host's ip_default_ttl"
}

@test "sysctl: net.* is dropped when network=inherit leaves the job in the host's netns" {
	local host
	host=$(cat /proc/sys/net/ipv4/ip_default_ttl)
	write_policy '{"allow": {"network_inherit": true}}'
	write_config weak
	annotate network=inherit
	# the host's own value: even if it got through, nothing would change
	update_config '.linux.sysctl = {"net.ipv4.ip_default_ttl": $v}' --arg v "$host"
	ar_bg_ok create "$CID"
	run inspect "$CID" '[.policy.controls[] | select(.control == "sysctl") | .why]'
	assert_output_contains "dropped net.ipv4.ip_default_ttl"
	assert_eq "$(inspect "$CID" '.effective_spec.linux.sysctl // {} | length')" 0
}

@test "sysctl: a host-wide one (kernel.core_pattern) is dropped, the host keeps its value" {
	local host
	host=$(cat /proc/sys/kernel/core_pattern)
	write_config default
	update_config '.linux.sysctl = {"kernel.core_pattern": "|/bin/false", "kernel.shmmax": "65536"}'
	set_args cat /proc/sys/kernel/shmmax
	ar_bg_ok create "$CID"
	run inspect "$CID" '[.policy.controls[] | select(.control == "sysctl") | .why]'
	assert_output_contains "dropped kernel.core_pattern"
	assert_eq "$(inspect "$CID" '.effective_spec.linux.sysctl')" '{"kernel.shmmax":"65536"}'
	_ar delete --force "$CID"
	ar run "$CID"
	assert_status 0
	assert_eq "$output" 65536 "the job's shmmax (its own ipc namespace)"
	assert_eq "$(cat /proc/sys/kernel/core_pattern)" "$host" "the host's core_pattern"
}

# ---- the host's kernel interfaces, bound in ---------------------------------------------------

@test "a read-write bind of the host's /sys or /proc comes out read-only, submounts too" {
	write_config weak
	mkdir -p "$BUNDLE/rootfs/hs" "$BUNDLE/rootfs/hq"
	update_config '.mounts += [{destination: "/hs", type: "bind", source: "/sys", options: ["rbind", "rw"]},
		{destination: "/hq", type: "bind", source: "/proc", options: ["rbind", "rw"]}]'
	set_args sh -c 'grep -E " /h[sq][ /]" /proc/self/mountinfo | while read -r _ _ _ _ mnt opts _; do
			case ",$opts," in *,ro,*) echo "ro $mnt" ;; *) echo "WRITABLE $mnt ($opts)" ;; esac
		done'
	ar run "$CID"
	assert_status 0
	assert_output_contains "ro /hs"
	assert_output_contains "ro /hq"
	assert_output_not_contains "WRITABLE"
}

@test "a volume bind keeps its own rw (the caller's choice)" {
	write_config default
	mkdir -p "$TMP/vol" "$BUNDLE/rootfs/data"
	update_config '.mounts += [{destination: "/data", type: "bind", source: $s, options: ["rbind", "rw"]}]' \
		--arg s "$TMP/vol"
	set_args sh -c 'echo kept >/data/f && cat /data/f'
	ar run "$CID"
	assert_status 0
	assert_output_contains "kept"
	assert_eq "$(cat "$TMP/vol/f")" kept
}

# ---- a /tmp of the config's own --------------------------------------------------------------

@test "a config's tmpfs /tmp with suid, dev and 100g gets nosuid, nodev and the size cap" {
	write_config weak
	update_config '.mounts += [{destination: "/tmp", type: "tmpfs", source: "tmpfs",
		options: ["rw", "suid", "dev", "exec", "size=100g"]}]'
	set_args probe rootfs-ro
	ar run "$CID"
	assert_status 0
	assert_output_contains "ok rootfs-ro"
	assert_output_contains "tmpfs of 256 MiB"
}

# ---- linux.resources.unified cannot undo the limits ---------------------------------------------

@test "unified: pids.max, memory.max, memory.swap.max, cpu.max above the limits are dropped" {
	write_config default
	update_config '.linux.resources.unified = {"pids.max": "max", "memory.max": "99999999999",
		"memory.swap.max": "1g", "cpu.max": "max 100000"}'
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" '.effective_spec.linux.resources.unified // {} | length')" 0
	run inspect "$CID" '[.policy.controls[] | select(.control == "limits") | .why]'
	assert_output_contains "dropped unified pids.max=max"
	assert_output_contains "dropped unified cpu.max=max 100000"
}

@test "unified: values within the limits are kept (cgroup v2 only)" {
	[[ -f /sys/fs/cgroup/cgroup.controllers ]] || skip "linux.resources.unified needs cgroup v2"
	write_config default
	update_config '.linux.resources.unified = {"pids.max": "100", "memory.swap.max": "0"}'
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" '.effective_spec.linux.resources.unified')" '{"pids.max":"100","memory.swap.max":"0"}'
}
