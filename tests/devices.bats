#!/usr/bin/env bats
# /dev: the default device set, the config's devices, the symlinks, and the
# devices cgroup / eBPF filter.

load helpers

@test "devices: the default device set" {
	set_cmd 'for d in null zero full random urandom tty; do stat -c "%n %F %t:%T" /dev/$d; done'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" "/dev/null character special file 1:3"
	assert_eq "${lines[1]}" "/dev/zero character special file 1:5"
	assert_eq "${lines[2]}" "/dev/full character special file 1:7"
	assert_eq "${lines[3]}" "/dev/random character special file 1:8"
	assert_eq "${lines[4]}" "/dev/urandom character special file 1:9"
	assert_eq "${lines[5]}" "/dev/tty character special file 5:0"
}

@test "devices: the default devices work" {
	set_cmd 'echo x > /dev/null && echo null-ok
		head -c 16 /dev/zero | wc -c
		head -c 16 /dev/urandom | wc -c
		echo x > /dev/full 2>&1 || echo full-ok'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" null-ok
	assert_eq "${lines[1]}" 16
	assert_eq "${lines[2]}" 16
	assert_output_contains full-ok
}

@test "devices: /dev/fd and stdio symlinks, ptmx, pts, shm" {
	set_cmd 'for l in fd stdin stdout stderr ptmx; do echo "$l $(readlink /dev/$l)"; done; test -d /dev/pts && echo pts; test -d /dev/shm && echo shm'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" "fd /proc/self/fd"
	assert_eq "${lines[1]}" "stdin /proc/self/fd/0"
	assert_eq "${lines[2]}" "stdout /proc/self/fd/1"
	assert_eq "${lines[3]}" "stderr /proc/self/fd/2"
	assert_eq "${lines[4]}" "ptmx pts/ptmx"
	assert_eq "${lines[5]}" pts
	assert_eq "${lines[6]}" shm
}

@test "devices: no /dev/console without a terminal, and no host devices" {
	set_cmd 'ls /dev'
	ar_ok run "$CID"
	local d
	for d in console sda vda kmsg mem port loop0; do
		[[ " ${lines[*]} " != *" $d "* ]] || fail "/dev/$d present"
	done
}

@test "devices: a config device with mode, uid and gid" {
	update_config '.linux.devices = [{path: "/dev/mynull", type: "c", major: 1, minor: 3, fileMode: 416, uid: 1000, gid: 100}]'
	set_cmd 'stat -c "%F %t:%T %a %u:%g" /dev/mynull'
	ar_ok run "$CID"
	assert_eq "${lines[-1]}" "character special file 1:3 640 1000:100"
}

@test "devices: a config block device and a fifo" {
	update_config '.linux.devices = [
		{path: "/dev/myloop", type: "b", major: 7, minor: 200, fileMode: 384},
		{path: "/dev/myfifo", type: "p", fileMode: 420}]'
	set_cmd 'stat -c "%F %t:%T" /dev/myloop; stat -c "%F" /dev/myfifo'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" "block special file 7:c8"
	assert_eq "${lines[1]}" "fifo"
}

@test "devices: a config device in a subdirectory of /dev" {
	update_config '.linux.devices = [{path: "/dev/sub/dir/zero2", type: "c", major: 1, minor: 5, fileMode: 438}]'
	update_config '.linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 5, access: "rwm"}]'
	set_cmd 'head -c 3 /dev/sub/dir/zero2 | wc -c'
	ar_ok run "$CID"
	assert_eq "${lines[-1]}" 3
}

# Device 1:2 (the old /dev/kmem) is absent from modern kernels: opening it
# gives "No such device or address" when the cgroup allows it and "Operation
# not permitted" when the cgroup denies it, with no capability involved.

@test "devices: access to a device node the cgroup does not allow is denied" {
	mknod "$ROOTFS/kmemnode" c 1 2
	set_cmd 'cat /kmemnode 2>&1; true'
	ar_ok run "$CID"
	assert_output_contains "Operation not permitted"
}

@test "devices: a config device is only usable if the cgroup allows it" {
	update_config '.linux.devices = [{path: "/dev/mykmem", type: "c", major: 1, minor: 2, fileMode: 438}]'
	set_cmd 'cat /dev/mykmem 2>&1; true'
	ar_ok run "$CID"
	assert_output_contains "Operation not permitted"

	update_config '.linux.resources.devices += [{allow: true, type: "c", major: 1, minor: 2, access: "r"}]'
	ar_ok run "$(new_id)"
	assert_output_contains "No such device or address"
}

@test "devices: a device made inside with CAP_MKNOD is still denied by the cgroup" {
	update_config '.process.capabilities.bounding += ["CAP_MKNOD"] | .process.capabilities.effective += ["CAP_MKNOD"] | .process.capabilities.permitted += ["CAP_MKNOD"]'
	# mknod itself may be denied (agentrun) or allowed (runc allows "m" for all)
	set_cmd 'mknod /dev/kmem2 c 1 2 2>&1 && cat /dev/kmem2 2>&1; mknod /dev/null2 c 1 3 && echo x > /dev/null2 && echo null-ok'
	ar_ok run "$CID"
	assert_output_contains "Operation not permitted"
	assert_output_not_contains "No such device"
	assert_output_contains null-ok
}

@test "devices: a device path outside /dev is created where asked" {
	update_config '.linux.devices = [{path: "/tmp/zero3", type: "c", major: 1, minor: 5, fileMode: 438}]'
	set_cmd 'stat -c "%F %t:%T" /tmp/zero3'
	ar_ok run "$CID"
	assert_eq "${lines[-1]}" "character special file 1:5"
}

@test "devices: a bad device type is an error" {
	update_config '.linux.devices = [{path: "/dev/bad", type: "x", major: 1, minor: 3}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}
