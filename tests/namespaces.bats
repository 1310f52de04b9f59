#!/usr/bin/env bats
# The eight namespaces: created fresh, or joined by path; user ns mappings;
# time ns offsets.

load helpers

# the proc name of each OCI namespace type
declare -gA NS_PROC=([pid]=pid [network]=net [ipc]=ipc [uts]=uts [mount]=mnt
	[cgroup]=cgroup [user]=user [time]=time)

host_ns() {
	readlink "/proc/$$/ns/$1"
}

# ensure_ns TYPE [PATH]: the config has namespace TYPE (joined at PATH if given).
ensure_ns() {
	if [[ -n ${2:-} ]]; then
		update_config '.linux.namespaces = ([.linux.namespaces[] | select(.type != $t)] + [{type: $t, path: $p}])' \
			--arg t "$1" --arg p "$2"
	else
		update_config '.linux.namespaces = ([.linux.namespaces[] | select(.type != $t)] + [{type: $t}])' \
			--arg t "$1"
	fi
}

drop_ns() {
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != $t)]' --arg t "$1"
}

add_userns_mappings() {
	update_config '.linux.uidMappings = [{containerID: 0, hostID: 100000, size: 65536}]
		| .linux.gidMappings = [{containerID: 0, hostID: 200000, size: 65536}]'
}

# check_new_ns TYPE: the container's namespace TYPE is not the host's.
check_new_ns() {
	local type=$1 p=${NS_PROC[$1]}
	ensure_ns "$type"
	set_cmd "readlink /proc/self/ns/$p"
	ar_ok run "$CID"
	[[ ${lines[-1]} == "$p:["*"]" ]] || fail "unexpected: $output"
	[[ ${lines[-1]} != "$(host_ns "$p")" ]] || fail "$type namespace is the host's"
}

@test "namespaces: new pid namespace, the process is pid 1" {
	check_new_ns pid
	set_cmd 'echo $$'
	ar_ok run "$(new_id)"
	[[ ${lines[-1]} == 1 ]]
}

@test "namespaces: new network namespace with only lo, and lo is up" {
	check_new_ns network
	set_cmd 'ls /sys/class/net; ip -o link show lo'
	ar_ok run "$(new_id)"
	[[ ${lines[0]} == lo ]]
	[[ ${#lines[@]} -eq 2 ]] || fail "more than lo: $output"
	[[ ${lines[1]} == *"<LOOPBACK,UP"* ]] || fail "lo is down: $output"
}

@test "namespaces: new ipc namespace" {
	check_new_ns ipc
}

@test "namespaces: new uts namespace, the host name stays" {
	local before
	before=$(hostname)
	check_new_ns uts
	update_config '.hostname = "inside-box"'
	set_cmd 'hostname'
	ar_ok run "$(new_id)"
	[[ ${lines[-1]} == inside-box ]]
	[[ $(hostname) == "$before" ]]
}

@test "namespaces: new mount namespace, container mounts stay inside" {
	check_new_ns mount
	add_mount /mnt tmpfs tmpfs
	update_config '.process.args = ["sleep", "100"]'
	local id
	id=$(new_id)
	run_detached_ok "$id"
	wait_for_state "$id" running
	if grep -q " $ROOTFS/mnt " /proc/self/mountinfo; then
		fail "the container's mount shows on the host"
	fi
	grep -q " /mnt " "/proc/$(init_pid "$id")/mountinfo"
}

@test "namespaces: new cgroup namespace, the container's cgroup is /" {
	check_new_ns cgroup
	set_cmd 'cat /proc/self/cgroup'
	ar_ok run "$(new_id)"
	local line
	for line in "${lines[@]}"; do
		[[ $line == *:/ ]] || fail "cgroup path not / inside: $line"
	done
}

@test "namespaces: new user namespace with uid and gid mappings" {
	ensure_ns user
	add_userns_mappings
	set_cmd 'id -u; id -g; cat /proc/self/uid_map /proc/self/gid_map; readlink /proc/self/ns/user'
	ar_ok run "$CID"
	[[ ${lines[0]} == 0 ]]
	[[ ${lines[1]} == 0 ]]
	read -r -a m <<<"${lines[2]}"
	[[ ${m[*]} == "0 100000 65536" ]] || fail "uid_map: ${lines[2]}"
	read -r -a m <<<"${lines[3]}"
	[[ ${m[*]} == "0 200000 65536" ]] || fail "gid_map: ${lines[3]}"
	[[ ${lines[4]} != "$(host_ns user)" ]]
}

@test "namespaces: user namespace: the host sees the mapped ids" {
	ensure_ns user
	add_userns_mappings
	update_config '.process.args = ["sleep", "100"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" running
	local pid
	pid=$(init_pid "$CID")
	[[ $(awk '/^Uid:/ { print $2 }' "/proc/$pid/status") == 100000 ]]
	[[ $(awk '/^Gid:/ { print $2 }' "/proc/$pid/status") == 200000 ]]
}

@test "namespaces: user namespace: a file made inside is owned by the mapped host ids" {
	ensure_ns user
	add_userns_mappings
	update_config '.process.user = {uid: 5, gid: 6}'
	set_cmd 'touch /out/made-by-5'
	ar_ok run "$CID"
	[[ $(stat -c %u:%g "$OUT/made-by-5") == 100005:200006 ]]
}

@test "namespaces: time namespace with boottime and monotonic offsets" {
	not_on runc "runc 1.1 has no time namespace (timeOffsets came in 1.2)"
	[[ -e /proc/self/ns/time ]] || skip "kernel without time namespaces"
	ensure_ns time
	# ten days
	update_config '.linux.timeOffsets = {boottime: {secs: 864000, nanosecs: 0}, monotonic: {secs: 864000, nanosecs: 0}}'
	set_cmd 'cut -d" " -f1 /proc/uptime; readlink /proc/self/ns/time'
	ar_ok run "$CID"
	local inside host
	inside=${lines[0]%.*}
	host=$(cut -d' ' -f1 /proc/uptime)
	host=${host%.*}
	((inside >= host + 864000 - 5 && inside <= host + 864000 + 60)) ||
		fail "uptime inside $inside, host $host: offset not applied"
	[[ ${lines[1]} != "$(host_ns time)" ]]
}

@test "namespaces: without a namespace entry the host's is shared" {
	drop_ns network
	drop_ns uts
	# a hostname needs a private uts namespace
	update_config 'del(.hostname)'
	set_cmd 'for n in net uts; do readlink /proc/self/ns/$n; done'
	ar_ok run "$CID"
	[[ ${lines[0]} == "$(host_ns net)" ]]
	[[ ${lines[1]} == "$(host_ns uts)" ]]
}

@test "namespaces: join another container's namespaces by path" {
	update_config '.process.args = ["sleep", "100"] | .hostname = "first"'
	local first=$CID
	run_detached_ok "$first"
	wait_for_state "$first" running
	local pid
	pid=$(init_pid "$first")

	local t
	for t in network ipc uts; do
		ensure_ns "$t" "/proc/$pid/ns/${NS_PROC[$t]}"
	done
	update_config 'del(.hostname)'
	set_cmd 'for n in net ipc uts; do readlink /proc/self/ns/$n; done; hostname'
	ar_ok run "$(new_id)"
	[[ ${lines[0]} == "$(readlink "/proc/$pid/ns/net")" ]]
	[[ ${lines[1]} == "$(readlink "/proc/$pid/ns/ipc")" ]]
	[[ ${lines[2]} == "$(readlink "/proc/$pid/ns/uts")" ]]
	[[ ${lines[3]} == first ]]
}

@test "namespaces: join a pid namespace by path" {
	update_config '.process.args = ["sleep", "100"]'
	local first=$CID
	run_detached_ok "$first"
	wait_for_state "$first" running
	local pid
	pid=$(init_pid "$first")
	ensure_ns pid "/proc/$pid/ns/pid"
	set_cmd 'readlink /proc/self/ns/pid; ps -o pid,args | grep -c "sleep 100"'
	ar_ok run "$(new_id)"
	[[ ${lines[0]} == "$(readlink "/proc/$pid/ns/pid")" ]]
	# the first container's init is visible
	((lines[1] >= 1))
}

@test "namespaces: join a network namespace bind-mounted on a file" {
	requires_cmd unshare
	local nsfile=$HOSTDIR/netns
	touch "$nsfile"
	unshare --net="$nsfile" true
	on_teardown "umount '$nsfile'"
	ensure_ns network "$nsfile"
	set_cmd 'readlink /proc/self/ns/net'
	ar_ok run "$CID"
	local want
	want=$(nsenter --net="$nsfile" readlink /proc/self/ns/net)
	[[ ${lines[-1]} == "$want" ]]
}

@test "namespaces: join a user namespace by path" {
	ensure_ns user
	add_userns_mappings
	update_config '.process.args = ["sleep", "100"]'
	local first=$CID
	run_detached_ok "$first"
	wait_for_state "$first" running
	local pid
	pid=$(init_pid "$first")

	# the same mappings stay in the config (runc requires them when joining)
	ensure_ns user "/proc/$pid/ns/user"
	ensure_ns network "/proc/$pid/ns/net"
	set_cmd 'readlink /proc/self/ns/user; cat /proc/self/uid_map'
	ar_ok run "$(new_id)"
	[[ ${lines[0]} == "$(readlink "/proc/$pid/ns/user")" ]]
	read -r -a m <<<"${lines[1]}"
	[[ ${m[*]} == "0 100000 65536" ]]
}

@test "namespaces: a namespace path that is not a namespace is an error" {
	touch "$HOSTDIR/not-a-ns"
	ensure_ns network "$HOSTDIR/not-a-ns"
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "namespaces: a missing namespace path is an error" {
	ensure_ns network "$HOSTDIR/missing"
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "namespaces: a namespace path of the wrong type is an error" {
	ensure_ns network "/proc/self/ns/uts"
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "namespaces: user namespace without mappings is an error" {
	ensure_ns user
	update_config 'del(.linux.uidMappings) | del(.linux.gidMappings)'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "namespaces: a duplicated namespace type is an error" {
	update_config '.linux.namespaces += [{type: "pid"}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}
