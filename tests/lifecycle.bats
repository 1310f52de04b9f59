#!/usr/bin/env bats
# create / start / state / kill / delete / run, and the exec fifo.

load helpers

@test "lifecycle: create leaves the container created with an init pid" {
	update_config '.process.args = ["sleep", "100"]'
	create_ok "$CID"
	ar_ok state "$CID"
	[[ $(jq -r .status <<<"$output") == created ]]
	[[ $(jq -r .id <<<"$output") == "$CID" ]]
	local pid
	pid=$(jq -r .pid <<<"$output")
	((pid > 0))
	[[ -d /proc/$pid ]]
}

@test "lifecycle: state has runc's fields" {
	update_config '.process.args = ["sleep", "100"] | .annotations = {"org.example.k": "v"}'
	create_ok "$CID"
	ar_ok state "$CID"
	local f
	for f in ociVersion id pid status bundle rootfs created owner; do
		jq -e "has(\"$f\")" <<<"$output" >/dev/null || fail "state lacks $f: $output"
	done
	[[ $(jq -r .bundle <<<"$output") == "$BUNDLE" ]]
	[[ $(jq -r .rootfs <<<"$output") == "$ROOTFS" ]]
	[[ $(jq -r '.annotations["org.example.k"]' <<<"$output") == v ]]
	# RFC 3339
	[[ $(jq -r .created <<<"$output") =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2} ]]
}

@test "lifecycle: create -> start -> running -> kill -> stopped -> delete" {
	set_cmd 'echo started > /out/started; exec sleep 100'
	create_ok "$CID"
	[[ $(state_field "$CID" status) == created ]]

	ar_ok start "$CID"
	wait_for_state "$CID" running
	wait_for_file "$OUT/started"

	ar_ok kill "$CID" KILL
	wait_for_state "$CID" stopped

	ar_ok delete "$CID"
	ar state "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "lifecycle: exec fifo: create blocks the init until start" {
	set_cmd 'echo ran > /out/ran; exec sleep 100'
	create_ok "$CID"
	local pid
	pid=$(init_pid "$CID")
	sleep 0.5
	# the user's process has not run: no output, and the init is not yet sh
	[[ ! -e $OUT/ran ]]
	[[ $(state_field "$CID" status) == created ]]
	[[ -d /proc/$pid ]]

	ar_ok start "$CID"
	wait_for_file "$OUT/ran"
	# same process, now the user's program (execve, not a new pid)
	[[ $(init_pid "$CID") == "$pid" ]]
	[[ $(readlink "/proc/$pid/exe") != "$(readlink -f "$RUNTIME")" ]]
	wait_for_state "$CID" running
}

@test "lifecycle: start twice fails, start of a stopped container fails" {
	update_config '.process.args = ["true"]'
	create_ok "$CID"
	ar_ok start "$CID"
	wait_for_state "$CID" stopped
	ar start "$CID"
	[[ $status -ne 0 ]]
	[[ $(state_field "$CID" status) == stopped ]]
}

@test "lifecycle: kill with a signal name and a number" {
	set_cmd 'trap "echo usr1 >> /out/sig" USR1; trap "echo term >> /out/sig; exit 0" TERM; echo ready > /out/ready; while :; do sleep 0.1; done'
	run_detached_ok "$CID"
	wait_for_file "$OUT/ready"
	# one at a time: signals that arrive together coalesce
	ar_ok kill "$CID" USR1
	wait_for_lines "$OUT/sig" 1
	ar_ok kill "$CID" SIGUSR1
	wait_for_lines "$OUT/sig" 2
	ar_ok kill "$CID" 10
	wait_for_lines "$OUT/sig" 3
	[[ $(cat "$OUT/sig") == $'usr1\nusr1\nusr1' ]]
	# default signal is SIGTERM
	ar_ok kill "$CID"
	wait_for_state "$CID" stopped
	[[ $(tail -n1 "$OUT/sig") == term ]]
}

@test "lifecycle: kill of a stopped container fails" {
	update_config '.process.args = ["true"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" stopped
	ar kill "$CID" KILL
	[[ $status -ne 0 ]]
}

@test "lifecycle: kill --all signals every process in the container" {
	update_config '.process.args = ["sh", "-c", "sleep 100 & sleep 100 & echo ok > /out/ready; wait"]'
	run_detached_ok "$CID"
	wait_for_file "$OUT/ready"
	ar_ok kill --all "$CID" KILL
	wait_for_state "$CID" stopped
}

@test "lifecycle: delete of a running container needs --force" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" running
	ar delete "$CID"
	[[ $status -ne 0 ]]
	[[ $(state_field "$CID" status) == running ]]
	ar_ok delete --force "$CID"
	ar state "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "lifecycle: delete of a created container kills and removes it (runc semantics)" {
	update_config '.process.args = ["sleep", "100"]'
	create_ok "$CID"
	local pid
	pid=$(init_pid "$CID")
	ar_ok delete "$CID"
	ar state "$CID"
	[[ $status -ne 0 ]]
	local tries=50
	while [[ -d /proc/$pid ]] && ((tries-- > 0)); do sleep 0.1; done
	[[ ! -d /proc/$pid ]] || [[ $(readlink "/proc/$pid/root") != / ]] || fail "init $pid still alive"
	assert_no_leftovers "$CID"
}

@test "lifecycle: run propagates the exit code" {
	set_cmd 'exit 3'
	ar run "$CID"
	assert_status 3
	assert_no_leftovers "$CID"
}

@test "lifecycle: run returns 128+signal when the process is killed" {
	# SIGKILL from inside only works when the process is not its pid ns' init
	update_config '.linux.namespaces -= [{"type": "pid"}]'
	set_cmd 'kill -9 $$'
	ar run "$CID"
	assert_status 137
	assert_no_leftovers "$CID"
}

@test "lifecycle: run returns 128+signal when killed through the runtime" {
	set_cmd 'echo up > /out/up; exec sleep 100'
	_ar_to_file "$(stdio_file "$CID")" run "$CID" &
	local runpid=$!
	wait_for_file "$OUT/up"
	wait_for_state "$CID" running
	ar_ok kill "$CID" KILL
	local rc=0
	wait "$runpid" || rc=$?
	assert_eq "$rc" 137 "exit status of run"
	assert_no_leftovers "$CID"
}

@test "lifecycle: run passes stdout and stderr through" {
	set_cmd 'echo to-stdout; echo to-stderr >&2'
	ar_ok run "$CID"
	assert_output_contains to-stdout
	assert_output_contains to-stderr
}

@test "lifecycle: run passes stdin through" {
	set_cmd 'read line; echo "got:$line"'
	run bash -c 'echo hello | "$0" --root "$1" run "$2"' "$RUNTIME" "$AR_ROOT" "$CID"
	assert_status 0
	assert_output_contains "got:hello"
}

@test "lifecycle: run --detach returns while the container runs" {
	set_cmd 'echo up > /out/up; exec sleep 100'
	run_detached_ok "$CID"
	wait_for_file "$OUT/up"
	[[ $(state_field "$CID" status) == running ]]
}

@test "lifecycle: run --keep keeps the stopped container" {
	ar run --keep "$CID"
	[[ $status -eq 0 ]] || [[ $output != *"flag provided but not defined"* ]] || skip "$RUNTIME_NAME has no run --keep"
	assert_status 0
	[[ $(state_field "$CID" status) == stopped ]]
	ar_ok delete "$CID"
	assert_no_leftovers "$CID"
}

@test "lifecycle: run --bundle from another directory" {
	set_cmd 'echo from-bundle'
	cd /
	ar_ok run --bundle "$BUNDLE" "$CID"
	assert_output_contains from-bundle
	ar_ok run -b "$BUNDLE" "$(new_id)"
	assert_output_contains from-bundle
}

@test "lifecycle: the process gets args, env and cwd" {
	update_config '.process.env = ["PATH=/bin:/usr/bin", "FOO=bar baz"] | .process.cwd = "/tmp"'
	set_cmd 'echo "foo=$FOO"; pwd; echo "args:$0"'
	ar_ok run "$CID"
	assert_output_contains "foo=bar baz"
	assert_output_contains "/tmp"
	assert_output_contains "args:sh"
}

@test "lifecycle: a missing cwd is created" {
	update_config '.process.cwd = "/tmp/new/dir"'
	set_cmd 'pwd'
	ar_ok run "$CID"
	assert_output_contains /tmp/new/dir
}

@test "lifecycle: the program is looked up in the container's PATH" {
	update_config '.process.args = ["echo", "found"]'
	ar_ok run "$CID"
	assert_output_contains found
}

@test "lifecycle: a missing program fails with the reason" {
	update_config '.process.args = ["/no/such/binary"]'
	ar run "$CID"
	[[ $status -ne 0 ]]
	[[ $output == *"/no/such/binary"* ]]
	[[ $output == *"no such file"* || $output == *"No such file"* || $output == *"not found"* ]]
	assert_no_leftovers "$CID"
}

@test "lifecycle: the container cannot see host fds beyond stdio" {
	set_cmd 'ls /proc/self/fd | sort -n | tr "\n" " "'
	exec 7</etc/hostname
	ar_ok run "$CID"
	exec 7<&-
	# 0 1 2 and the fd of ls itself (3)
	[[ $output =~ ^"0 1 2 3 "$ ]] || fail "unexpected fds: $output"
}

@test "lifecycle: create --preserve-fds passes extra fds" {
	set_cmd 'cat <&3 > /out/fd3'
	echo "through fd 3" >"$BATS_TEST_TMPDIR/fd3"
	# fd 3 is bats' own output: park it on 9 while the runtime gets ours
	exec 9>&3 3<"$BATS_TEST_TMPDIR/fd3"
	ar_detached create --preserve-fds 1 "$CID"
	exec 3>&9 9>&-
	assert_status 0
	ar_ok start "$CID"
	wait_for_file "$OUT/fd3"
	[[ $(cat "$OUT/fd3") == "through fd 3" ]]
}

@test "lifecycle: a cwd through a leaked fd cannot reach the host (CVE-2024-21626)" {
	# a marker at the host's root: seeing it from inside means the cwd escaped
	local marker=/ar-escape-marker-$CID
	touch "$marker"
	on_teardown "rm -f '$marker'"
	local fd id
	for fd in 3 4 5 6 7 8 9 10; do
		id=$(new_id)
		update_config '.process.cwd = $c' --arg c "/proc/self/fd/$fd"
		set_cmd 'cd ../../../../../../../../../..; ls -a /proc/self/cwd/'
		ar run "$id"
		[[ $output != *"${marker#/}"* ]] || fail "fd $fd: the process reached the host's root"
		assert_no_leftovers "$id"
	done
}

@test "lifecycle: the container's cwd is inside its rootfs" {
	update_config '.process.cwd = "/tmp"'
	set_cmd 'readlink /proc/self/cwd; ls /proc/self/cwd/../bin/busybox'
	ar_ok run "$CID"
	assert_eq "${lines[0]}" /tmp
	assert_eq "${lines[1]}" /proc/self/cwd/../bin/busybox
}

@test "lifecycle: kill of a created container stops it" {
	update_config '.process.args = ["sleep", "100"]'
	create_ok "$CID"
	ar_ok kill "$CID" KILL
	wait_for_state "$CID" stopped
	ar_ok delete "$CID"
	assert_no_leftovers "$CID"
}

@test "lifecycle: a hostname without a private uts namespace is an error" {
	update_config '.hostname = "nope" | .linux.namespaces = [.linux.namespaces[] | select(.type != "uts")]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "lifecycle: personality LINUX32" {
	not_on runc "runc 1.1 has no linux.personality (added in 1.2)"
	update_config '.linux.personality = {domain: "LINUX32"}'
	set_cmd 'uname -m'
	ar_ok run "$CID"
	[[ ${lines[-1]} == i686 || ${lines[-1]} == i386 ]] || fail "uname -m: ${lines[-1]}"
}

@test "lifecycle: apparmorProfile is accepted where AppArmor is off" {
	not_on runc "runc 1.1.5 writes the profile to /proc/self/attr/exec and fails (EINVAL) when AppArmor is off"
	[[ ! -d /sys/kernel/security/apparmor ]] || skip "AppArmor is enabled here"
	update_config '.process.apparmorProfile = "ar-test-profile"'
	set_cmd 'echo lsm-ok'
	ar_ok run "$CID"
	assert_output_contains lsm-ok
}

@test "lifecycle: selinuxLabel is accepted (with a warning) where SELinux is off" {
	not_on runc "runc 1.1.5 refuses a selinuxLabel when SELinux is off"
	[[ ! -e /sys/fs/selinux/enforce ]] || skip "SELinux is enabled here"
	update_config '.process.selinuxLabel = "system_u:system_r:container_t:s0"'
	set_cmd 'echo lsm-ok'
	ar_ok run "$CID"
	assert_output_contains lsm-ok
}

@test "lifecycle: create --no-new-keyring" {
	update_config '.process.args = ["true"]'
	ar_detached create --no-new-keyring "$CID"
	assert_status 0
	ar_ok start "$CID"
	wait_for_state "$CID" stopped
}

@test "lifecycle: --debug and --log are accepted" {
	ar --debug --log "$BATS_TEST_TMPDIR/debug.log" run "$CID"
	assert_status 0
	[[ -e $BATS_TEST_TMPDIR/debug.log ]]
}

@test "lifecycle: hostname and domainname" {
	not_on runc "runc 1.1 ignores domainname (added in 1.2)"
	update_config '.hostname = "box" | .domainname = "example.org"'
	set_cmd 'hostname; cat /proc/sys/kernel/domainname'
	ar_ok run "$CID"
	[[ ${lines[0]} == box ]]
	[[ ${lines[1]} == example.org ]]
}

@test "lifecycle: sysctl" {
	update_config '.linux.sysctl = {"net.ipv4.ip_forward": "1", "kernel.shmmax": "123456"}'
	set_cmd 'cat /proc/sys/net/ipv4/ip_forward /proc/sys/kernel/shmmax'
	ar_ok run "$CID"
	[[ ${lines[0]} == 1 ]]
	[[ ${lines[1]} == 123456 ]]
}

@test "lifecycle: readonly root" {
	set_cmd 'touch /x 2>&1; echo rc=$?'
	ar_ok run "$CID"
	assert_output_contains "Read-only file system"
	update_config '.root.readonly = false'
	set_cmd 'touch /x && echo wrote'
	ar_ok run "$(new_id)"
	assert_output_contains wrote
	[[ -e $ROOTFS/x ]]
}

@test "lifecycle: oomScoreAdj and noNewPrivileges" {
	update_config '.process.oomScoreAdj = 123 | .process.noNewPrivileges = true'
	set_cmd 'cat /proc/self/oom_score_adj; grep NoNewPrivs /proc/self/status'
	ar_ok run "$CID"
	[[ ${lines[0]} == 123 ]]
	[[ ${lines[1]} =~ NoNewPrivs:[[:space:]]+1 ]]
}

@test "lifecycle: --version" {
	run "$RUNTIME" --version
	assert_status 0
	assert_output_contains "version"
	assert_output_contains "spec: "
	if is_agentrun; then
		assert_output_contains "agentrun version"
		assert_output_contains "spec: 1.2.0"
		assert_output_contains "libseccomp"
	fi
}

@test "lifecycle: --log-format json writes errors as JSON lines" {
	ar --log "$BATS_TEST_TMPDIR/log.json" --log-format json state nonexistent
	[[ $status -ne 0 ]]
	local last
	last=$(grep '"level":"error"' "$BATS_TEST_TMPDIR/log.json" | tail -n1)
	[[ -n $last ]] || fail "no error record in $(cat "$BATS_TEST_TMPDIR/log.json")"
	jq -e '.msg and .time' <<<"$last" >/dev/null
	[[ $(jq -r .msg <<<"$last") == *"does not exist"* ]]
}

@test "lifecycle: concurrent commands on one ID are serialised" {
	update_config '.process.args = ["sleep", "100"]'
	create_ok "$CID"
	local i pids=()
	for i in 1 2 3 4; do
		ar_raw state "$CID" >"$BATS_TEST_TMPDIR/state.$i" 2>&1 &
		pids+=($!)
	done
	ar_raw delete --force "$CID" >"$BATS_TEST_TMPDIR/del" 2>&1 &
	pids+=($!)
	for i in "${pids[@]}"; do wait "$i" || true; done
	# each state either saw the whole container or none of it
	for i in 1 2 3 4; do
		if jq -e .status "$BATS_TEST_TMPDIR/state.$i" >/dev/null 2>&1; then
			continue
		fi
		grep -q "does not exist" "$BATS_TEST_TMPDIR/state.$i" ||
			fail "state $i: $(cat "$BATS_TEST_TMPDIR/state.$i")"
	done
	ar state "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}
