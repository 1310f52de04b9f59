#!/usr/bin/env bats
# maskedPaths and readonlyPaths.

load helpers

# the default masked paths that this kernel has
existing_masked_files() {
	local p
	for p in /proc/kcore /proc/keys /proc/timer_list /proc/latency_stats /proc/timer_stats /proc/sched_debug; do
		[[ -f $p ]] && echo "$p"
	done
	return 0
}

@test "masked: the default masked paths read empty" {
	local files
	files=$(existing_masked_files)
	[[ -n $files ]] || skip "none of the default masked files exist on this kernel"
	set_cmd "for f in $(echo $files); do echo \"\$f \$(wc -c < \$f)\"; done; ls /proc/acpi | wc -l; ls /sys/firmware | wc -l"
	ar_ok run "$CID"
	local f i=0
	for f in $files; do
		assert_eq "${lines[i]}" "$f 0"
		i=$((i + 1))
	done
	assert_eq "${lines[i]}" 0 "/proc/acpi entries"
	assert_eq "${lines[i + 1]}" 0 "/sys/firmware entries"
}

@test "masked: a masked file reads empty and a masked dir is empty and read-only" {
	echo topsecret >"$ROOTFS/etc/secret"
	mkdir -p "$ROOTFS/etc/secretdir"
	echo topsecret >"$ROOTFS/etc/secretdir/f"
	update_config '.root.readonly = false | .linux.maskedPaths += ["/etc/secret", "/etc/secretdir"]'
	set_cmd 'cat /etc/secret; ls /etc/secretdir | wc -l; touch /etc/secretdir/new 2>&1; echo x > /etc/secret; echo rc=$?'
	ar_ok run "$CID"
	assert_output_not_contains topsecret
	assert_eq "${lines[0]}" 0
	assert_output_contains "Read-only file system"
	# the write went to /dev/null, not to the file
	[[ $(cat "$ROOTFS/etc/secret") == topsecret ]]
}

@test "masked: a masked path that does not exist is ignored" {
	update_config '.linux.maskedPaths += ["/no/such/path"]'
	set_cmd 'echo ok'
	ar_ok run "$CID"
	assert_output_contains ok
}

@test "masked: the default readonly paths are read-only" {
	set_cmd 'echo 1 > /proc/sys/kernel/ns_last_pid 2>&1; echo 1 > /proc/irq/default_smp_affinity 2>&1; true'
	ar_ok run "$CID"
	[[ ${lines[0]} == *"Read-only file system"* ]] || fail "/proc/sys: ${lines[0]}"
	[[ ${lines[1]} == *"Read-only file system"* ]] || fail "/proc/irq: ${lines[1]}"
}

@test "masked: a custom readonly path inside a writable mount" {
	mkdir -p "$OUT/ro"
	update_config '.linux.readonlyPaths += ["/out/ro"]'
	set_cmd 'touch /out/rw-ok; touch /out/ro/x 2>&1; true'
	ar_ok run "$CID"
	assert_output_contains "Read-only file system"
	[[ -e $OUT/rw-ok ]]
	[[ ! -e $OUT/ro/x ]]
}

@test "masked: a readonly path that does not exist is ignored" {
	update_config '.linux.readonlyPaths += ["/no/such/path"]'
	set_cmd 'echo ok'
	ar_ok run "$CID"
	assert_output_contains ok
}

@test "masked: masking uses the real /dev/null, not a file mounted over it (CVE-2025-31133)" {
	agentrun_only "runc 1.1.5 masks with whatever /dev/null is"
	echo notnull >"$HOSTDIR/fakenull"
	echo topsecret >"$ROOTFS/etc/secret"
	add_mount /dev/null bind "$HOSTDIR/fakenull" '["bind", "rw"]'
	update_config '.linux.maskedPaths += ["/etc/secret"]'
	set_cmd 'cat /etc/secret > /out/seen; echo overwritten > /etc/secret; true'
	ar run "$CID"
	if [[ $status -eq 0 ]]; then
		[[ $(cat "$OUT/seen") == "" ]] || fail "masked with a fake /dev/null: $(cat "$OUT/seen")"
	fi
	[[ $(cat "$HOSTDIR/fakenull") == notnull ]] || fail "the fake /dev/null was written through the mask"
	[[ $(cat "$ROOTFS/etc/secret") == topsecret ]]
	assert_no_leftovers "$CID"
}

@test "masked: masking still works with a user namespace" {
	update_config '.linux.namespaces += [{type: "user"}]
		| .linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 100000, size: 65536}]'
	set_cmd 'wc -c < /proc/keys; ls /proc/acpi | wc -l'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 0
	assert_eq "${lines[1]}" 0
}
