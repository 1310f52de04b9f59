#!/usr/bin/env bats
# process.user: uid, gid, additionalGids, umask; HOME.

load helpers

@test "user: uid, gid and additional groups" {
	update_config '.process.user = {uid: 1000, gid: 100, additionalGids: [10, 20, 30]}'
	set_cmd 'id -u; id -g; id -G'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 1000 uid
	assert_eq "${lines[1]}" 100 gid
	local g
	for g in 10 20 30; do
		[[ " ${lines[2]} " == *" $g "* ]] || fail "group $g missing: ${lines[2]}"
	done
}

@test "user: no additionalGids means no supplementary groups" {
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_cmd 'id -G; grep ^Groups: /proc/self/status'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 1000
	[[ ${lines[1]} =~ ^Groups:[[:space:]]*$ ]] || fail "supplementary groups: ${lines[1]}"
}

@test "user: root keeps uid 0 and gid 0" {
	update_config '.process.user = {uid: 0, gid: 0}'
	set_cmd 'id -u; id -g'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 0
	assert_eq "${lines[1]}" 0
}

@test "user: the host sees the process with the same ids" {
	update_config '.process.user = {uid: 1234, gid: 4321} | .process.args = ["sleep", "100"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" running
	local pid
	pid=$(init_pid "$CID")
	[[ $(awk '/^Uid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status") == "1234 1234 1234 1234" ]]
	[[ $(awk '/^Gid:/ { print $2, $3, $4, $5 }' "/proc/$pid/status") == "4321 4321 4321 4321" ]]
}

@test "user: umask" {
	update_config '.process.user = {uid: 1000, gid: 1000, umask: 23}'
	set_cmd 'umask; touch /out/f; mkdir /out/d'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 0027
	assert_eq "$(stat -c %a "$OUT/f")" 640
	assert_eq "$(stat -c %a "$OUT/d")" 750
	assert_eq "$(stat -c %u:%g "$OUT/f")" 1000:1000
}

@test "user: umask 0" {
	update_config '.process.user = {uid: 0, gid: 0, umask: 0}'
	set_cmd 'umask'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 0000
}

@test "user: default umask is 0022" {
	update_config '.process.user = {uid: 0, gid: 0}'
	set_cmd 'umask'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" 0022
}

@test "user: HOME comes from the container's /etc/passwd when unset" {
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.env = ["PATH=/bin:/usr/bin"]'
	set_cmd 'echo "home=$HOME"'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" "home=/tmp"
}

@test "user: HOME from the config wins" {
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.env = ["PATH=/bin:/usr/bin", "HOME=/elsewhere"]'
	set_cmd 'echo "home=$HOME"'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" "home=/elsewhere"
}

@test "user: a non-root user cannot write where only root can" {
	update_config '.process.user = {uid: 1000, gid: 1000}'
	set_cmd 'touch /dev/shm/ok && echo shm-ok; touch /dev/x 2>&1; true'
	ar_ok run "$CID"
	assert_output_contains shm-ok
	assert_output_contains "Permission denied"
}

@test "user: noNewPrivileges for a non-root user" {
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.noNewPrivileges = true'
	set_cmd 'grep ^NoNewPrivs: /proc/self/status'
	ar_ok run "$CID"
	[[ ${lines[-1]} =~ NoNewPrivs:[[:space:]]+1 ]]
	update_config '.process.noNewPrivileges = false'
	ar_ok run "$(new_id)"
	[[ ${lines[-1]} =~ NoNewPrivs:[[:space:]]+0 ]]
}
