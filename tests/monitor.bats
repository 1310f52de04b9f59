#!/usr/bin/env bats
# The per-container monitor (issue 5): the exec audit, the wall-clock deadline, the exit
# report and the audit log's caps.  Timings are bounds, never benchmarks, except in the
# benchmark test, which runs only with AR_BENCH=1.

load monitor-helpers

setup_file() {
	mon_build_helper
}

setup() {
	mon_setup
}

teardown() {
	ar_teardown
}

# ---------------------------------------------------------------------------
# the exec audit

@test "exec audit: each exec of a script is logged with argv, pid, ppid, uid, path, cwd" {
	# uid 1000 and cwd /tmp, so that neither is a default that would pass by chance
	update_config '.process.user = {uid: 1000, gid: 1000} | .process.cwd = "/tmp"'
	set_cmd '/bin/busybox echo hello "two words"
		/bin/ls /
		sh -c '\''sh -c "cat /etc/hostname"'\''
		/bin/busybox sleep 1000 &
		/bin/busybox echo started >/out/started
		wait'
	create_ok "$CID"
	ar_ok start "$CID"
	wait_for_file "$OUT/started"
	local init log
	init=$(init_pid "$CID")
	log=$(audit_log "$CID")

	assert_exec "$CID" '["/bin/busybox","echo","hello","two words"]'
	assert_eq "$(field "$line" path)" /bin/busybox path
	assert_eq "$(field "$line" ppid)" "$init" ppid
	assert_exec "$CID" '["/bin/ls","/"]'
	assert_eq "$(field "$line" path)" /bin/ls path
	# the chain: sh runs sh runs cat (busybox sh execs its last command in place)
	assert_exec "$CID" '["sh","-c","sh -c \"cat /etc/hostname\""]'
	assert_eq "$(field "$line" ppid)" "$init" ppid
	assert_exec "$CID" '["sh","-c","cat /etc/hostname"]'
	assert_exec "$CID" '["cat","/etc/hostname"]'
	# the sleep still runs: its pid and ppid are the host's, and right
	assert_exec "$CID" '["/bin/busybox","sleep","1000"]'
	local pid
	pid=$(field "$line" pid)
	assert_eq "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "/bin/busybox sleep 1000 " "cmdline of $pid"
	assert_eq "$(awk '/^PPid:/ {print $2}' "/proc/$pid/status")" "$init" "PPid of $pid"
	assert_eq "$(field "$line" ppid)" "$init" ppid
	# every exec: the uid, the cwd, nothing truncated
	assert_eq "$(jq -c 'select(.event == "exec") | [.uid, .cwd, .truncated]' <"$log" | sort -u)" \
		'[1000,"/tmp",false]' "uid, cwd and truncated of every exec"
	# the init's own execve is the first exec
	assert_exec "$CID" '["sh","-c","/bin/busybox echo hello \"two words\"\n\t\t/bin/ls /\n\t\tsh -c '\''sh -c \"cat /etc/hostname\"'\''\n\t\t/bin/busybox sleep 1000 &\n\t\t/bin/busybox echo started >/out/started\n\t\twait"]'
	assert_eq "$(field "$line" pid)" "$init" "pid of the init's exec"
	assert_eq "$(field "$line" path)" /bin/sh path

	ar_ok delete --force "$CID"
	assert_log_valid "$CID"
	local ev
	for ev in create start exit delete; do
		assert_eq "$(count_events "$CID" "$ev")" 1 "$ev events"
	done
	assert_eq "$(jq -r .event <"$log" | head -1)" create "first event"
	assert_eq "$(jq -r .event <"$log" | tail -1)" delete "last event"
	[[ $(events "$CID" create | jq -r '.policy.audit') == true ]] || fail "create has no policy summary"
}

@test "exec audit: agentrun exec sessions and their children are logged" {
	set_cmd 'echo ready >/out/ready; exec /bin/busybox sleep 1000'
	create_ok "$CID"
	ar_ok start "$CID"
	wait_for_file "$OUT/ready"
	ar_ok exec "$CID" /bin/busybox echo from-exec "a b" 'c"d'
	assert_output_contains from-exec
	ar_ok exec --cwd /tmp --user 1000:1000 "$CID" sh -c '/bin/busybox true inner; echo done'
	assert_output_contains done

	assert_exec "$CID" '["/bin/busybox","echo","from-exec","a b","c\"d"]'
	assert_exec "$CID" '["sh","-c","/bin/busybox true inner; echo done"]'
	assert_eq "$(field "$line" uid)" 1000 uid
	assert_eq "$(field "$line" cwd)" /tmp cwd
	local sh_pid=$(field "$line" pid)
	assert_exec "$CID" '["/bin/busybox","true","inner"]'
	assert_eq "$(field "$line" ppid)" "$sh_pid" "ppid of the exec session's child"
	ar_ok delete --force "$CID"
	assert_log_valid "$CID"
}

@test "exec audit: hostile argv (newlines, quotes, invalid UTF-8, 10,000 arguments) stays valid JSON" {
	cat >"$ROOTFS/bin/hostile" <<-'EOF'
		#!/bin/sh
		/bin/busybox true "$(printf 'a\nb')" "q\"uo'te\\" "$(printf '\377\376bad\001')"
		/bin/busybox true $(seq 1 10000)
		long=$(head -c 5000 /dev/zero | tr '\0' x)
		/bin/busybox true "$long"
		ctl=$(head -c 4000 /dev/zero | tr '\0' '\001')
		/bin/busybox true $ctl $ctl $ctl $ctl $ctl $ctl $ctl $ctl $ctl $ctl $ctl $ctl
	EOF
	chmod +x "$ROOTFS/bin/hostile"
	update_config '.process.args = ["/bin/hostile"]'
	ar run "$CID"
	assert_status 0
	local log
	log=$(audit_log "$CID")
	assert_log_valid "$CID"

	assert_exec "$CID" '["/bin/busybox","true","a\nb","q\"uo'\''te\\","\ufffd\ufffdbad\u0001"]'
	assert_eq "$(field "$line" truncated)" false truncated
	# 10,000 arguments: argv is capped at 64 entries
	line=$(jq -c 'select(.event == "exec" and .argv[1] == "true" and .argv[2] == "1")' <"$log")
	assert_eq "$(jq '.argv | length' <<<"$line")" 64 "argv entries"
	assert_eq "$(jq -c '.argv[0:4], .argv[63]' <<<"$line" | tr '\n' ' ')" '["/bin/busybox","true","1","2"] "62" ' "argv kept"
	assert_eq "$(field "$line" truncated)" true truncated
	# one argument of 5,000 bytes: cut at 4 KiB
	line=$(jq -c 'select(.event == "exec" and (.argv[2] // "" | startswith("xxx")))' <"$log")
	assert_eq "$(jq '.argv[2] | length' <<<"$line")" 4096 "long argument"
	assert_eq "$(field "$line" truncated)" true truncated
	# control bytes escape sixfold: the line has a byte budget (32 KiB)
	line=$(jq -c 'select(.event == "exec" and (.argv[2] // "" | startswith("\u0001")))' <"$log")
	[[ -n $line && ${#line} -lt 34000 ]] || fail "exec line of ${#line} bytes"
	assert_eq "$(field "$line" truncated)" true truncated
}

@test "exec audit: strings that end at an unmapped page are read whole; a bad pointer is null" {
	update_config '.process.args = ["/bin/mh", "edge", "/bin/mh"]'
	ar run "$CID"
	assert_status 0
	assert_output_contains "edge exec status 0"
	assert_output_contains "bad pointer errno 14"
	assert_log_valid "$CID"
	assert_exec "$CID" '["/bin/mh","noop"]'
	assert_eq "$(field "$line" path)" /bin/mh path
	assert_eq "$(field "$line" truncated)" false truncated
	# an exec line is an attempt: this one failed with EFAULT, and says what could be read
	assert_exec "$CID" '["/bin/mh",null]'
}

# ---------------------------------------------------------------------------
# the deadline

@test "timeout: run of sh -c 'sleep 60 & sleep 60 & wait' under a 2s timeout ends in < 4 s with 137" {
	update_config '.annotations["run.agentrun.timeout"] = "2s"'
	set_cmd 'sleep 60 & sleep 60 & wait'
	local t0 dt
	t0=$(now_ms)
	ar run "$CID"
	dt=$(($(now_ms) - t0))
	assert_status 137
	((dt < 4000)) || fail "run took $dt ms"
	((dt >= 1900)) || fail "run ended after $dt ms, before the deadline"
	assert_log_valid "$CID"
	assert_eq "$(count_events "$CID" timeout)" 1 "timeout events"
	line=$(events "$CID" exit)
	assert_eq "$(field "$line" timed_out)" true timed_out
	assert_eq "$(field "$line" signal)" 9 signal
	# no sleep of it survives (teardown also looks for any process in the rootfs)
	local devino
	devino=$(stat -L -c '%d:%i' "$ROOTFS")
	[[ -z $(stat -L -c '%d:%i %n' /proc/[0-9]*/root 2>/dev/null | awk -v d="$devino" '$1 == d') ]] ||
		fail "a process of the container survived"
}

@test "timeout: a started container is killed at the deadline and shows stopped" {
	update_config '.annotations["run.agentrun.timeout"] = "2s"'
	set_cmd 'sleep 60 & sleep 60 & wait'
	create_ok "$CID"
	local pids_dir
	pids_dir=$(container_cgroup "$CID" pids)
	ar_ok start "$CID"
	local t0 dt
	t0=$(now_ms)
	wait_for_state "$CID" stopped 4
	dt=$(($(now_ms) - t0))
	((dt < 4000)) || fail "stopped after $dt ms"
	wait_for_event "$CID" exit 2
	[[ ! -s $pids_dir/cgroup.procs ]] || fail "processes left in $pids_dir: $(cat "$pids_dir/cgroup.procs")"
	assert_eq "$(count_events "$CID" timeout)" 1 "timeout events"
	assert_eq "$(events "$CID" exit | jq -r .timed_out)" true timed_out
	ar_ok delete "$CID"
}

# ---------------------------------------------------------------------------
# the exit report

@test "exit report: a job that allocates 100 MiB reports mem_peak_bytes >= 100 MiB" {
	update_config '.process.args = ["/bin/mh", "alloc", "100"]'
	ar run "$CID"
	assert_status 0
	assert_output_contains "allocated 100 MiB"
	line=$(events "$CID" exit)
	assert_eq "$(field "$line" exit_code)" 0 exit_code
	assert_eq "$(field "$line" signal)" null signal
	assert_eq "$(field "$line" oom_killed)" false oom_killed
	local peak
	peak=$(field "$line" mem_peak_bytes)
	((peak >= 100 * 1024 * 1024)) || fail "mem_peak_bytes $peak < 100 MiB"
	((peak < 200 * 1024 * 1024)) || fail "mem_peak_bytes $peak: far more than the job used"
	[[ $(field "$line" cpu_s) != 0 ]] || fail "cpu_s is 0"
	[[ $(field "$line" pids_peak) -ge 1 ]] || fail "pids_peak: $(field "$line" pids_peak)"
}

@test "exit report: a job over its memory limit reports oom_killed and an oom event" {
	update_config '.process.args = ["/bin/mh", "alloc", "100"]
		| .annotations["run.agentrun.memory"] = "32m"'
	ar run "$CID"
	assert_status 137
	assert_eq "$(count_events "$CID" oom)" 1 "oom events"
	line=$(events "$CID" exit)
	assert_eq "$(field "$line" oom_killed)" true oom_killed
	assert_eq "$(field "$line" signal)" 9 signal
	assert_eq "$(field "$line" timed_out)" false timed_out
}

@test "exit report: exit_code and signal of exit 3 and kill -9 \$\$" {
	set_cmd 'exit 3'
	ar run "$CID"
	assert_status 3
	line=$(events "$CID" exit)
	assert_eq "$(field "$line" exit_code)" 3 exit_code
	assert_eq "$(field "$line" signal)" null signal

	# in its own pid namespace the init is immune to its own SIGKILL: share the host's here
	local id2
	id2=$(new_id)
	mon_policy '{"controls": {"namespaces": false}}'
	update_config '.linux.namespaces |= map(select(.type != "pid"))'
	set_cmd 'kill -9 $$'
	ar run "$id2"
	assert_status 137
	line=$(events "$id2" exit)
	assert_eq "$(field "$line" exit_code)" null exit_code
	assert_eq "$(field "$line" signal)" 9 signal
	assert_eq "$(field "$line" oom_killed)" false oom_killed
}

# ---------------------------------------------------------------------------
# the caps

# AR_FLOOD_EXECS overrides the count (100,000 takes ~1-2 min on a loaded 2-core VM).
@test "flood: 100,000 execs keep the log under a 1m cap, one dropped line, monitor RSS < 1 MiB" {
	local n=${AR_FLOOD_EXECS:-100000} cap=1048576
	# An ASan monitor is dynamic and instrumented: its RSS says nothing about the real one.
	if grep -qa __asan_init "$(dirname "$RUNTIME")/agentrun-monitor"; then
		skip "the monitor is an ASan build: the flood and its RSS bound run in the plain build"
	fi
	# a shorter flood (AR_FLOOD_EXECS) still has to overflow its cap
	((n >= 20000)) || cap=65536
	mon_policy "{\"audit\": {\"max_bytes\": \"$((cap / 1024))k\"}}"
	update_config '.process.args = ["/bin/mh", "flood", $n, "/bin/mh", "noop"]' --arg n "$n"
	create_ok "$CID"
	local mon init hwm=0 h
	mon=$(monitor_pid "$CID")
	init=$(init_pid "$CID")
	ar_ok start "$CID"
	while kill -0 "$init" 2>/dev/null; do
		h=$(awk '/^VmHWM:/ {print $2}' "/proc/$mon/status" 2>/dev/null) || true
		[[ -z $h ]] || hwm=$h
		sleep 0.5
	done
	wait_for_event "$CID" exit 5
	echo "# $(cat "$(stdio_file "$CID")"); monitor VmHWM ${hwm} kB" >&3
	grep -q "execs $n ok $n failed 0" "$(stdio_file "$CID")" || fail "flood: $(cat "$(stdio_file "$CID")")"
	((hwm > 0 && hwm < 1024)) || fail "monitor VmHWM $hwm kB"
	ar_ok delete "$CID"

	local log size execs dropped
	log=$(audit_log "$CID")
	size=$(stat -c %s "$log")
	((size <= cap)) || fail "log of $size bytes, over the cap of $cap"
	((size > cap / 2)) || fail "log of $size bytes: the cap was not reached"
	assert_log_valid "$CID"
	assert_eq "$(count_events "$CID" dropped)" 1 "dropped lines"
	execs=$(count_events "$CID" exec)
	dropped=$(events "$CID" dropped | jq .count)
	# every exec is either logged or counted: the init's own exec, plus n
	assert_eq "$((execs + dropped))" "$((n + 1))" "exec lines ($execs) + dropped ($dropped)"
	# the report survives the cap
	assert_eq "$(count_events "$CID" exit)" 1 "exit lines"
	assert_eq "$(count_events "$CID" delete)" 1 "delete lines"
}

# ---------------------------------------------------------------------------
# robustness

@test "robustness: with the monitor SIGKILLed, execs fail fast (ENOSYS) and the job stays contained" {
	# once the monitor is gone nothing can exec, so the script waits on fifos (builtins only)
	mkfifo "$OUT/go" "$OUT/stay"
	set_cmd 'echo ready >/out/ready
		read x </out/go
		/bin/busybox true 2>/out/result
		echo rc=$? >>/out/result
		read x </out/stay'
	create_ok "$CID"
	ar_ok start "$CID"
	wait_for_file "$OUT/ready"
	local mon init pids_dir
	mon=$(monitor_pid "$CID")
	init=$(init_pid "$CID")
	pids_dir=$(container_cgroup "$CID" pids)
	kill -9 "$mon"
	local tries=50
	while [[ -e /proc/$mon ]] && ((tries-- > 0)); do sleep 0.1; done
	# agentrun exec: its listener has nowhere to go; it fails at once, it does not hang
	local t0 dt
	t0=$(now_ms)
	ar exec "$CID" /bin/busybox true
	dt=$(($(now_ms) - t0))
	[[ $status -ne 0 ]] || fail "exec succeeded without its audit"
	((dt < 1000)) || fail "agentrun exec took $dt ms"
	# inside: the next execve fails with ENOSYS (the shell says so, 126) within a second
	t0=$(now_ms)
	timeout 5 sh -c "echo go >'$OUT/go'" || fail "the container is not reading $OUT/go"
	wait_for_lines "$OUT/result" 2 5
	dt=$(($(now_ms) - t0))
	grep -q "Function not implemented" "$OUT/result" || fail "exec inside: $(cat "$OUT/result")"
	grep -qx "rc=126" "$OUT/result" || fail "exec inside: $(cat "$OUT/result")"
	((dt < 1000)) || fail "the exec inside took $dt ms to fail"
	# still contained: alive (neither freed nor killed), under seccomp, in its cgroup
	kill -0 "$init" || fail "the init died"
	assert_eq "$(awk '/^Seccomp:/ {print $2}' "/proc/$init/status")" 2 "seccomp mode of the init"
	grep -qx "$init" "$pids_dir/cgroup.procs" || fail "the init left $pids_dir"
	ar_ok state "$CID"
	ar_ok delete --force "$CID"
}

# ---------------------------------------------------------------------------
# the OCI seccomp agent (linux.seccomp.listenerPath) and the exec audit

# start_agent: tests/monitor-helper's OCI seccomp agent on $AGENT_SOCK, writing $AGENT_OUT.
start_agent() {
	AGENT_SOCK=$BATS_TEST_TMPDIR/agent.sock
	AGENT_OUT=$BATS_TEST_TMPDIR/agent.out
	: >"$AGENT_OUT"
	"$BATS_FILE_TMPDIR/monitor-helper" agent "$AGENT_SOCK" "$AGENT_OUT" </dev/null >/dev/null 2>&1 &
	local pid=$!
	on_teardown "kill $pid 2>/dev/null; wait $pid 2>/dev/null"
	local tries=50
	while [[ ! -S $AGENT_SOCK ]] && ((tries-- > 0)); do sleep 0.1; done
	[[ -S $AGENT_SOCK ]] || fail "the agent did not listen on $AGENT_SOCK"
}

@test "listenerPath: the notify fd and the container process state reach the agent; audit_degraded" {
	start_agent
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s,
		listenerMetadata: "meta data", syscalls: [{names: ["uname"], action: "SCMP_ACT_NOTIFY"}]}
		| .process.args = ["sh", "-c", "/bin/busybox uname -s; echo ready >/out/ready; exec /bin/busybox sleep 1000"]' \
		--arg s "$AGENT_SOCK"
	create_ok "$CID"
	ar_ok start "$CID"
	wait_for_file "$OUT/ready"
	grep -qx Linux "$(stdio_file "$CID")" || fail "uname under the agent: $(cat "$(stdio_file "$CID")")"
	local init state
	init=$(init_pid "$CID")
	state=$(jq -c 'select(.state)' <"$AGENT_OUT" | head -1)
	assert_eq "$(jq -c '.state | [.ociVersion != null, .fds, .pid, .metadata]' <<<"$state")" \
		"[true,[\"seccompFd\"],$init,\"meta data\"]" "container process state"
	assert_eq "$(jq -c '.state.state | [.id, .pid, .status, .bundle]' <<<"$state")" \
		"[\"$CID\",$init,\"creating\",\"$BUNDLE\"]" "its state"
	assert_eq "$(jq -r .got_fd <<<"$state")" true "seccompFd sent"
	# the agent got (and answered) the uname of the job
	[[ -n $(jq -c 'select(.notify == 63)' <"$AGENT_OUT") ]] || fail "no uname notification: $(cat "$AGENT_OUT")"

	# an exec session: its own connection, its own fd, status running
	ar_ok exec "$CID" /bin/busybox uname -s
	assert_output_contains Linux
	assert_eq "$(jq -c 'select(.state) | .state.state.status' <"$AGENT_OUT" | tr '\n' ' ')" \
		'"creating" "running" ' "states sent"

	# the caller's listener won: the log says the execs are not audited
	assert_eq "$(count_events "$CID" audit_degraded)" 1 "audit_degraded lines"
	assert_eq "$(count_events "$CID" exec)" 0 "exec lines"
	events "$CID" audit_degraded | grep -q SCMP_ACT_NOTIFY || fail "audit_degraded: no reason"
	ar_ok delete --force "$CID"
	assert_log_valid "$CID"
}

@test "listenerPath: an agent that cannot be reached fails create" {
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", listenerPath: $s,
		syscalls: [{names: ["uname"], action: "SCMP_ACT_NOTIFY"}]}' \
		--arg s "$BATS_TEST_TMPDIR/nobody-listens.sock"
	ar_detached create "$CID"
	[[ $status -ne 0 ]] || fail "create succeeded"
	assert_output_contains "listenerPath"
	assert_no_leftovers "$CID"
}

@test "audit_degraded: the agent seccomp filter off means no exec audit, and the log says so" {
	mon_policy '{"controls": {"seccomp": false}}'
	set_cmd '/bin/busybox true'
	ar run "$CID"
	assert_status 0
	assert_eq "$(count_events "$CID" audit_degraded)" 1 "audit_degraded lines"
	assert_eq "$(count_events "$CID" exec)" 0 "exec lines"
	assert_eq "$(count_events "$CID" exit)" 1 "exit lines"
}
