#!/usr/bin/env bats
# Mounts: each type, bind/rbind options, propagation, destinations that try to
# leave the rootfs, --no-pivot.

load helpers

# mountinfo_line DEST: the container's mountinfo line for DEST (in $output).
mountinfo_of() {
	local dest=$1 line
	for line in "${lines[@]}"; do
		read -r -a f <<<"$line"
		[[ ${f[4]:-} == "$dest" ]] && echo "$line"
	done
	return 0
}

@test "mounts: tmpfs with size, mode and flags" {
	add_mount /mnt/t tmpfs tmpfs '["size=1m", "mode=1777", "nosuid", "nodev", "noexec"]'
	set_cmd 'stat -c %a /mnt/t; cat /proc/self/mountinfo'
	ar_ok run "$CID"
	[[ ${lines[0]} == 1777 ]]
	local mi
	mi=$(mountinfo_of /mnt/t)
	[[ $mi == *" - tmpfs "* ]] || fail "not tmpfs: $mi"
	[[ $mi == *size=1024k* ]] || fail "size: $mi"
	[[ $mi == *nosuid* && $mi == *nodev* && $mi == *noexec* ]] || fail "flags: $mi"
}

@test "mounts: tmpfs size is enforced" {
	add_mount /mnt/t tmpfs tmpfs '["size=1m"]'
	set_cmd 'dd if=/dev/zero of=/mnt/t/big bs=1k count=2048 2>&1; echo rc=$?'
	ar_ok run "$CID"
	assert_output_contains "No space left"
}

@test "mounts: bind read-only" {
	mkdir -p "$HOSTDIR/data"
	echo hello >"$HOSTDIR/data/file"
	add_mount /data bind "$HOSTDIR/data" '["bind", "ro"]'
	set_cmd 'cat /data/file; touch /data/new 2>&1; echo rc=$?'
	ar_ok run "$CID"
	[[ ${lines[0]} == hello ]]
	assert_output_contains "Read-only file system"
	[[ ! -e $HOSTDIR/data/new ]]
}

@test "mounts: bind read-write writes through to the host" {
	mkdir -p "$HOSTDIR/data"
	add_mount /data bind "$HOSTDIR/data" '["bind", "rw"]'
	set_cmd 'echo inside > /data/new'
	ar_ok run "$CID"
	[[ $(cat "$HOSTDIR/data/new") == inside ]]
}

@test "mounts: bind a single file, destination created" {
	echo filedata >"$HOSTDIR/onefile"
	add_mount /etc/deep/onefile bind "$HOSTDIR/onefile" '["bind", "ro"]'
	set_cmd 'cat /etc/deep/onefile'
	ar_ok run "$CID"
	[[ ${lines[-1]} == filedata ]]
}

@test "mounts: bind with nosuid, nodev, noexec" {
	mkdir -p "$HOSTDIR/data"
	cp "$BUSYBOX" "$HOSTDIR/data/bb"
	add_mount /data bind "$HOSTDIR/data" '["bind", "nosuid", "nodev", "noexec"]'
	set_cmd '/data/bb true 2>&1; echo rc=$?; cat /proc/self/mountinfo'
	ar_ok run "$CID"
	assert_output_contains "Permission denied"
	local mi
	mi=$(mountinfo_of /data)
	[[ $mi == *nosuid* && $mi == *nodev* && $mi == *noexec* ]] || fail "flags: $mi"
}

# make_tree: $HOSTDIR/tree with a tmpfs submount at sub/ holding a marker
make_tree() {
	mkdir -p "$HOSTDIR/tree/sub"
	echo top >"$HOSTDIR/tree/topfile"
	mount -t tmpfs artest "$HOSTDIR/tree/sub"
	on_teardown "umount -l '$HOSTDIR/tree/sub'"
	echo submount >"$HOSTDIR/tree/sub/marker"
}

@test "mounts: bind does not carry submounts" {
	make_tree
	add_mount /tree bind "$HOSTDIR/tree" '["bind"]'
	set_cmd 'cat /tree/topfile; ls /tree/sub | wc -l'
	ar_ok run "$CID"
	[[ ${lines[0]} == top ]]
	[[ ${lines[1]} == 0 ]]
}

@test "mounts: rbind carries submounts" {
	make_tree
	add_mount /tree bind "$HOSTDIR/tree" '["rbind"]'
	set_cmd 'cat /tree/topfile /tree/sub/marker'
	ar_ok run "$CID"
	[[ ${lines[0]} == top ]]
	[[ ${lines[1]} == submount ]]
}

@test "mounts: rbind rro makes the submounts read-only too" {
	make_tree
	add_mount /tree bind "$HOSTDIR/tree" '["rbind", "rro"]'
	set_cmd 'touch /tree/x 2>&1; touch /tree/sub/x 2>&1; true'
	ar_ok run "$CID"
	[[ ${lines[0]} == *"Read-only file system"* ]]
	[[ ${lines[1]} == *"Read-only file system"* ]]
}

# make_shared_src: $HOSTDIR/prop, a shared mount on the host
make_shared_src() {
	mkdir -p "$HOSTDIR/prop"
	mount --bind "$HOSTDIR/prop" "$HOSTDIR/prop"
	mount --make-shared "$HOSTDIR/prop"
	on_teardown "umount -l '$HOSTDIR/prop'"
}

# late_mount PROPAGATION: mount on the host under $HOSTDIR/prop after the
# container started; SEEN=yes if its bind of $HOSTDIR/prop shows the mount.
late_mount() {
	make_shared_src
	add_mount /prop bind "$HOSTDIR/prop" "[\"rbind\", \"$1\"]"
	update_config '.process.args = ["sleep", "100"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" running
	mkdir -p "$HOSTDIR/prop/late"
	mount -t tmpfs artest "$HOSTDIR/prop/late"
	on_teardown "umount -l '$HOSTDIR/prop/late'"
	SEEN=no
	if grep -q " /prop/late " "/proc/$(init_pid "$CID")/mountinfo"; then
		SEEN=yes
	fi
}

@test "mounts: rslave bind receives host mounts" {
	late_mount rslave
	assert_eq "$SEEN" yes "host mount seen inside"
}

@test "mounts: rprivate bind does not receive host mounts" {
	late_mount rprivate
	assert_eq "$SEEN" no "host mount seen inside"
}

@test "mounts: rshared bind is shared" {
	make_shared_src
	add_mount /prop bind "$HOSTDIR/prop" '["rbind", "rshared"]'
	set_cmd 'cat /proc/self/mountinfo'
	ar_ok run "$CID"
	[[ $(mountinfo_of /prop) == *" shared:"* ]] || fail "not shared: $(mountinfo_of /prop)"
}

@test "mounts: rootfsPropagation values are accepted" {
	local p
	for p in private rprivate slave rslave shared rshared; do
		update_config '.linux.rootfsPropagation = $p' --arg p "$p"
		set_cmd 'echo ok'
		ar_ok run "$(new_id)"
		assert_output_contains ok
	done
}

@test "mounts: the standard mounts: proc, sysfs, devpts, mqueue, shm, cgroup" {
	set_cmd 'cat /proc/self/mountinfo; ls /sys/fs/cgroup | wc -l'
	ar_ok run "$CID"
	[[ $(mountinfo_of /proc) == *" - proc "* ]]
	[[ $(mountinfo_of /sys) == *" - sysfs "* ]]
	[[ $(mountinfo_of /sys) =~ ^[^\ ]+\ [^\ ]+\ [^\ ]+\ [^\ ]+\ /sys\ ro ]] || fail "sysfs not ro: $(mountinfo_of /sys)"
	[[ $(mountinfo_of /dev/pts) == *" - devpts "* ]]
	[[ $(mountinfo_of /dev/mqueue) == *" - mqueue "* ]]
	[[ $(mountinfo_of /dev/shm) == *" - tmpfs "* ]]
	[[ $(mountinfo_of /dev) == *" - tmpfs "* ]]
	# the cgroup mount shows the container's hierarchies
	((${lines[-1]} > 0))
}

@test "mounts: cgroup mount shows the container's own cgroup" {
	set_cmd 'cat /proc/self/mountinfo'
	ar_ok run "$CID"
	local line found=
	for line in "${lines[@]}"; do
		[[ $line == *" /sys/fs/cgroup"* ]] && found=1
	done
	[[ -n $found ]]
}

@test "mounts: mqueue works" {
	update_config '.process.args = ["sh", "-c", "ls -d /dev/mqueue && touch /dev/mqueue/q 2>&1; true"]'
	ar_ok run "$CID"
	assert_output_contains /dev/mqueue
}

@test "mounts: bind of a missing source fails and leaves nothing" {
	add_mount /data bind "$HOSTDIR/missing" '["bind"]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_output_contains "$HOSTDIR/missing"
	assert_no_leftovers "$CID"
}

@test "mounts: unknown filesystem type fails and leaves nothing" {
	add_mount /data nosuchfs none
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "mounts: an absolute symlink destination stays inside the rootfs" {
	# naive code would mkdir/mount on the host at $HOSTDIR/escape
	ln -s "$HOSTDIR/escape" "$ROOTFS/evil"
	add_mount /evil/dir tmpfs tmpfs
	set_cmd 'cat /proc/self/mountinfo'
	ar run "$CID"
	[[ ! -e $HOSTDIR/escape ]] || fail "runtime followed the symlink out of the rootfs"
	if [[ $status -eq 0 ]]; then
		# resolved inside the rootfs: the mount sits at the in-rootfs target
		[[ -n $(mountinfo_of "$HOSTDIR/escape/dir") ]] || fail "mount not found inside: $output"
	fi
	assert_no_leftovers "$CID"
}

@test "mounts: a relative symlink destination cannot climb out of the rootfs" {
	local up=../../../../../../../../../../../../..
	ln -s "$up$HOSTDIR/escape2" "$ROOTFS/evil"
	add_mount /evil/dir tmpfs tmpfs
	set_cmd 'cat /proc/self/mountinfo'
	ar run "$CID"
	[[ ! -e $HOSTDIR/escape2 ]] || fail "runtime followed the symlink out of the rootfs"
	if [[ $status -eq 0 ]]; then
		[[ -n $(mountinfo_of "$HOSTDIR/escape2/dir") ]] || fail "mount not found inside: $output"
	fi
	assert_no_leftovers "$CID"
}

@test "mounts: a symlink destination pointing at a host dir does not mount over it" {
	mkdir -p "$HOSTDIR/victim"
	echo original >"$HOSTDIR/victim/file"
	ln -s "../../../../../../../../../../../..$HOSTDIR/victim" "$ROOTFS/evil"
	mkdir -p "$HOSTDIR/src"
	echo attacker >"$HOSTDIR/src/file"
	add_mount /evil bind "$HOSTDIR/src" '["rbind", "rw"]'
	set_cmd 'cat /evil/file > /out/seen; echo new > /evil/new'
	ar run "$CID"
	if [[ $status -eq 0 ]]; then
		# the mount landed at the symlink's target inside the rootfs
		[[ $(cat "$OUT/seen") == attacker ]]
		[[ $(cat "$HOSTDIR/src/new") == new ]]
	fi
	[[ $(cat "$HOSTDIR/victim/file") == original ]]
	[[ $(ls "$HOSTDIR/victim") == file ]] || fail "host dir changed: $(ls "$HOSTDIR/victim")"
	assert_no_leftovers "$CID"
}

@test "mounts: a file destination that is a symlink to a host file leaves it alone" {
	echo original >"$HOSTDIR/victimfile"
	ln -s "../../../../../../../../../../../..$HOSTDIR/victimfile" "$ROOTFS/evilfile"
	echo attacker >"$HOSTDIR/srcfile"
	add_mount /evilfile bind "$HOSTDIR/srcfile" '["bind", "rw"]'
	set_cmd 'cat /evilfile'
	ar run "$CID"
	[[ $(cat "$HOSTDIR/victimfile") == original ]]
	assert_no_leftovers "$CID"
}

@test "mounts: a symlink in a bind source's path is followed on the host (source is trusted)" {
	mkdir -p "$HOSTDIR/real"
	echo via-link >"$HOSTDIR/real/f"
	ln -s "$HOSTDIR/real" "$HOSTDIR/link"
	add_mount /data bind "$HOSTDIR/link" '["bind"]'
	set_cmd 'cat /data/f'
	ar_ok run "$CID"
	[[ ${lines[-1]} == via-link ]]
}

@test "mounts: destination over a file in the rootfs that is a symlink to /proc/self is refused or contained" {
	# a classic: a mount destination that resolves into procfs
	ln -s /proc/self/attr "$ROOTFS/procattr"
	add_mount /procattr/x tmpfs tmpfs
	ar run "$CID"
	# whatever happens, nothing is left and the host is untouched
	assert_no_leftovers "$CID"
}

@test "mounts: --no-pivot" {
	set_cmd 'ls /; cat /proc/self/mountinfo'
	ar_ok run --no-pivot "$CID"
	assert_output_contains busybox || assert_output_contains bin
	[[ -n $(mountinfo_of /proc) ]]
}

@test "mounts: mounts happen in order (a later mount can sit inside an earlier one)" {
	add_mount /mnt/a tmpfs tmpfs '["size=1m"]'
	add_mount /mnt/a/b tmpfs tmpfs '["size=2m"]'
	set_cmd 'cat /proc/self/mountinfo'
	ar_ok run "$CID"
	[[ $(mountinfo_of /mnt/a) == *size=1024k* ]]
	[[ $(mountinfo_of /mnt/a/b) == *size=2048k* ]]
}
