#!/usr/bin/env bats
# agentrun sandbox: one command runs an agent's code in a disposable box.
#
# Each test has its own --root and a host policy in its temp dir whose audit dir is also
# there, so nothing is written to /var/log/agentrun.  Sandbox IDs are generated; the tests
# learn them from --json and teardown checks that nothing of them is left (state, cgroup,
# mount, process).  Timings are bounds, never benchmarks.

load helpers

setup() {
	[[ $EUID -eq 0 ]] || fail "the integration tests must run as root"
	is_agentrun || skip "sandbox is agentrun's own command"
	[[ -x $RUNTIME ]] || fail "runtime '$RUNTIME' is not built"
	AR_ROOT=$BATS_TEST_TMPDIR/state
	AUDIT_DIR=$BATS_TEST_TMPDIR/audit
	# assert_no_leftovers looks for mounts under these; a sandbox has no bundle of its own
	BUNDLE=$AR_ROOT/.sandbox
	ROOTFS=$BATS_TEST_TMPDIR/no-rootfs
	JSON=$BATS_TEST_TMPDIR/result.json
	mkdir -p "$AR_ROOT" "$AUDIT_DIR" "$ROOTFS"
	cat >"$BATS_TEST_TMPDIR/policy.json" <<-EOF
		{"audit": {"enabled": true, "dir": "$AUDIT_DIR"}}
	EOF
	export AGENTRUN_POLICY=$BATS_TEST_TMPDIR/policy.json
	: >"$BATS_TEST_TMPDIR/.ids"
	: >"$BATS_TEST_TMPDIR/.cleanup"
	cd "$BATS_TEST_TMPDIR" || return 1
}

teardown() {
	local id rc=0
	# the audit went to the test's dir, never to the default one
	for id in $(cat "$BATS_TEST_TMPDIR/.ids" 2>/dev/null); do
		[[ ! -e /var/log/agentrun/$id.jsonl ]] || {
			rm -f "/var/log/agentrun/$id.jsonl"
			echo "audit log of $id written to /var/log/agentrun" >&2
			rc=1
		}
	done
	ar_teardown || rc=1
	return $rc
}

# sb ARGS...: `agentrun sandbox ARGS` under bats `run`; the sandbox's ID (from --json FILE,
# when the args have one) is remembered for the leak checks.
sb() {
	local a json=
	for a; do
		if [[ $json == next ]]; then
			json=$a
			break
		fi
		[[ $a == --json ]] && json=next
		[[ $a == -- ]] && break
	done
	run timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" sandbox "$@"
	echo "# sandbox $* -> status $status" >&2
	[[ -z $output ]] || printf '%s\n' "$output" | head -50 >&2
	if [[ -n $json && $json != next && $json != - && -s $json ]]; then
		track_id "$(jq -r .id "$json")"
	fi
}

# field NAME: one field of the last --json result ($JSON), as jq prints it.
field() {
	jq -c ".$1" "$JSON"
}

# ms_since START_NS
ms_since() {
	echo $((($(date +%s%N) - $1) / 1000000))
}

# A python3 snippet that allocates and touches N MiB.
alloc_py() {
	echo "n = $1 << 20
b = bytearray(n)
for i in range(0, n, 4096):
    b[i] = 1
print('allocated', len(b))"
}

@test "sandbox: python3 prints 42" {
	sb --json "$JSON" -- python3 -c 'print(6*7)'
	assert_status 0
	assert_eq "$output" 42 "output"
	assert_eq "$(field exit_code)" 0 "exit_code"
}

@test "sandbox: sh -c works out of the box" {
	sb -- sh -c 'echo "hello from $(basename "$0")"; uname -n'
	assert_status 0
	assert_eq "${lines[0]}" "hello from sh" "first line"
	assert_eq "${lines[1]}" "sandbox" "hostname"
}

@test "sandbox: stdin passes through and the exit code stays 3" {
	run bash -c 'printf "line one\nline two\n" | timeout -k 5 60 "$0" --root "$1" sandbox -- sh -c "cat; exit 3"' \
		"$RUNTIME" "$AR_ROOT"
	echo "$output" >&2
	assert_status 3
	assert_eq "$output" $'line one\nline two' "output"
}

@test "sandbox: stdout and stderr stay separate" {
	run bash -c 'timeout -k 5 60 "$0" --root "$1" sandbox -- sh -c "echo out; echo err >&2" 2>/dev/null' \
		"$RUNTIME" "$AR_ROOT"
	assert_status 0
	assert_eq "$output" out "stdout alone"
}

@test "sandbox: /etc/shadow, /root and /home are absent" {
	sb -- sh -c 'for p in /etc/shadow /etc/gshadow /root /home; do [ -e "$p" ] && echo "present: $p"; done
		[ -r /etc/passwd ] && [ -r /etc/ld.so.cache ] && echo checked'
	assert_status 0
	assert_eq "$output" checked "output"
}

@test "sandbox: /usr and / are read-only, /tmp is writable" {
	sb -- sh -c 'touch /usr/probe 2>/dev/null && echo usr-writable
		touch /probe 2>/dev/null && echo root-writable
		echo data >/tmp/probe && cat /tmp/probe'
	assert_status 0
	assert_eq "$output" data "output"
}

@test "sandbox: even uid 0 inside cannot write /usr" {
	sb --user 0 -- sh -c 'id -u; touch /usr/probe 2>/dev/null && echo usr-writable; echo done'
	assert_status 0
	assert_eq "$output" $'0\ndone' "output"
}

@test "sandbox: only lo exists (no network)" {
	# read the kernel's list of interfaces; no packet is sent
	sb -- sh -c 'tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " "'
	assert_status 0
	assert_eq "$output" lo "interfaces"
}

@test "sandbox: the host environment does not leak" {
	export AR_TEST_SECRET=hunter2-$RANDOM
	sb --env GIVEN=yes -- sh -c 'env; echo "home=$HOME"'
	unset AR_TEST_SECRET
	assert_status 0
	assert_output_not_contains hunter2
	assert_output_not_contains AR_TEST_SECRET
	assert_output_not_contains AGENTRUN_POLICY
	assert_output_contains "GIVEN=yes"
	assert_output_contains "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
}

@test "sandbox: the job runs as uid 65534 by default, --user changes it" {
	sb -- id -u
	assert_status 0
	assert_eq "$output" 65534 "default uid"
	sb --user 1000:1001 -- sh -c 'echo "$(id -u):$(id -g)"'
	assert_status 0
	assert_eq "$output" 1000:1001 "--user"
}

@test "sandbox: --timeout 1s ends sleep 30 with 137 in under 3 s, and says timed_out" {
	local t0
	t0=$(date +%s%N)
	sb --timeout 1s --json "$JSON" -- sleep 30
	local ms
	ms=$(ms_since "$t0")
	assert_status 137
	((ms < 3000)) || fail "took $ms ms"
	assert_eq "$(field timed_out)" true "timed_out"
	assert_eq "$(field exit_code)" 137 "exit_code"
	assert_eq "$(field signal)" 9 "signal"
	assert_eq "$(field oom_killed)" false "oom_killed"
	grep -q '"event":"timeout"' "$(jq -r .audit_log "$JSON")" || fail "no timeout event in the audit log"
}

@test "sandbox: a timeout kills the whole process tree" {
	local t0 ms
	t0=$(date +%s%N)
	sb --timeout 1s --json "$JSON" -- sh -c 'sleep 60 & sleep 60 & python3 -c "import time; time.sleep(60)" & wait'
	ms=$(ms_since "$t0")
	assert_status 137
	((ms < 3000)) || fail "took $ms ms"
	assert_eq "$(field timed_out)" true "timed_out"
}

@test "sandbox: --memory 64m with a 200 MB allocation is an OOM kill, reported" {
	sb --memory 64m --json "$JSON" -- python3 -c "$(alloc_py 200)"
	assert_status 137
	assert_output_not_contains allocated
	assert_eq "$(field oom_killed)" true "oom_killed"
	assert_eq "$(field exit_code)" 137 "exit_code"
	assert_eq "$(field timed_out)" false "timed_out"
	local peak
	peak=$(field mem_peak_bytes)
	((peak <= 64 << 20)) || fail "mem_peak_bytes $peak is above the 64 MiB limit"
	grep -q '"event":"oom"' "$(jq -r .audit_log "$JSON")" || fail "no oom event in the audit log"
}

@test "sandbox: a fork bomb is stopped at --pids, and the host is fine" {
	local t0 ms
	t0=$(date +%s%N)
	sb --pids 32 --timeout 20s --json "$JSON" -- sh -c \
		'exec 2>/dev/null; bomb() { bomb | bomb & }; bomb; sleep 2; echo still-here'
	ms=$(ms_since "$t0")
	# the job ends on its own, well before its deadline
	assert_eq "$(field timed_out)" false "timed_out"
	((ms < 15000)) || fail "took $ms ms"
	local peak
	peak=$(field pids_peak)
	[[ $peak == null ]] || ((peak <= 32)) || fail "pids_peak $peak is above --pids 32"
	[[ $peak == null ]] || ((peak >= 20)) || fail "pids_peak $peak: the bomb did not run?"
	# the host still forks
	run sh -c 'echo host-ok'
	assert_eq "$output" host-ok "host"
}

@test "sandbox: --workdir files written inside appear outside" {
	local ws=$BATS_TEST_TMPDIR/ws
	mkdir -p "$ws"
	chmod 777 "$ws" # the job runs as uid 65534
	echo "from the host" >"$ws/in.txt"
	sb --workdir "$ws" -- sh -c 'pwd; cat in.txt; echo "made inside" >out.txt; mkdir sub && echo x >sub/y'
	assert_status 0
	assert_eq "$output" $'/workspace\nfrom the host' "output"
	assert_eq "$(cat "$ws/out.txt")" "made inside" "out.txt"
	assert_eq "$(cat "$ws/sub/y")" x "sub/y"
	assert_eq "$(stat -c %u "$ws/out.txt")" 65534 "owner of out.txt"
}

@test "sandbox: --workdir with --user 0 writes a root-owned dir" {
	local ws=$BATS_TEST_TMPDIR/ws0
	mkdir -p "$ws"
	chmod 755 "$ws"
	sb --user 0 --workdir "$ws" -- sh -c 'echo ok >result'
	assert_status 0
	assert_eq "$(cat "$ws/result")" ok "result"
}

@test "sandbox: --mount is read-only by default, :rw is writable" {
	local ro=$BATS_TEST_TMPDIR/ro rw=$BATS_TEST_TMPDIR/rw
	mkdir -p "$ro" "$rw"
	chmod 777 "$ro" "$rw"
	echo data >"$ro/f"
	sb --mount "$ro:/data" --mount "$rw:/out:rw" -- sh -c \
		'cat /data/f; (echo x >/data/g) 2>/dev/null && echo ro-writable; echo y >/out/g'
	assert_status 0
	assert_eq "$output" data "output"
	[[ ! -e $ro/g ]] || fail "the read-only mount was written"
	assert_eq "$(cat "$rw/g")" y "rw mount"
}

@test "sandbox: --rootfs runs in a given tree" {
	local rootfs=$BATS_TEST_TMPDIR/tree
	make_rootfs "$rootfs"
	echo "custom tree" >"$rootfs/etc/marker"
	sb --rootfs "$rootfs" -- /bin/sh -c 'cat /etc/marker; [ -e /usr/bin/python3 ] && echo host-usr; true'
	assert_status 0
	assert_eq "$output" "custom tree" "output"
}

@test "sandbox: --json has every result field" {
	sb --json "$JSON" -- python3 -c "$(alloc_py 100)"
	assert_status 0
	assert_output_contains "allocated 104857600"
	cat "$JSON" >&2
	jq -e . "$JSON" >/dev/null || fail "--json is not JSON"
	local id
	id=$(jq -r .id "$JSON")
	[[ $id =~ ^sb-[0-9a-f]{16}$ ]] || fail "id '$id'"
	assert_eq "$(field exit_code)" 0 "exit_code"
	assert_eq "$(field signal)" null "signal"
	assert_eq "$(field timed_out)" false "timed_out"
	assert_eq "$(field oom_killed)" false "oom_killed"
	jq -e '.wall_s | type == "number" and . > 0 and . < 60' "$JSON" >/dev/null || fail "wall_s"
	jq -e '.cpu_s | type == "number" and . > 0 and . < 60' "$JSON" >/dev/null || fail "cpu_s"
	jq -e '.mem_peak_bytes >= 100 * 1048576' "$JSON" >/dev/null || fail "mem_peak_bytes below 100 MiB"
	jq -e '.mem_peak_bytes < 1024 * 1048576' "$JSON" >/dev/null || fail "mem_peak_bytes above 1 GiB"
	jq -e '.pids_peak == null or (.pids_peak >= 1 and .pids_peak < 10)' "$JSON" >/dev/null ||
		fail "pids_peak"
	assert_eq "$(jq -r .audit_log "$JSON")" "$AUDIT_DIR/$id.jsonl" "audit_log"
	# the job's figures and the monitor's exit report agree
	local exitline
	exitline=$(grep '"event":"exit"' "$AUDIT_DIR/$id.jsonl")
	assert_eq "$(jq -c .exit_code <<<"$exitline")" 0 "exit event exit_code"
	assert_eq "$(jq -c .mem_peak_bytes <<<"$exitline")" "$(field mem_peak_bytes)" "exit event mem_peak"
}

@test "sandbox: --json - writes the result to stderr" {
	run bash -c 'timeout -k 5 60 "$0" --root "$1" sandbox --json - -- sh -c "echo out" 2>&1 >/dev/null' \
		"$RUNTIME" "$AR_ROOT"
	assert_status 0
	track_id "$(jq -r .id <<<"$output")"
	assert_eq "$(jq -c .exit_code <<<"$output")" 0 "exit_code"
}

@test "sandbox: the exit code of a job killed by a signal is 128+N" {
	# a signal from inside cannot kill the namespace's init, so a child kills itself
	sb --json "$JSON" -- python3 -c 'import os, signal, sys
pid = os.fork()
if pid == 0:
    os.kill(os.getpid(), signal.SIGKILL)
_, st = os.waitpid(pid, 0)
sys.exit(128 + os.WTERMSIG(st))'
	assert_status 137
	assert_eq "$(field timed_out)" false "timed_out"
	assert_eq "$(field oom_killed)" false "oom_killed"
}

@test "sandbox: the audit log records every exec with argv" {
	sb --json "$JSON" -- sh -c 'ls / >/dev/null; echo "a b" | cat >/dev/null; python3 -c "pass"'
	assert_status 0
	local log id
	log=$(jq -r .audit_log "$JSON")
	id=$(jq -r .id "$JSON")
	jq -e . "$log" >/dev/null || fail "the audit log is not JSON lines"
	# the `start` line and the first exec's line come from two writers (start and the
	# monitor) racing for the file: check the order of the rest only
	assert_eq "$(jq -r .event "$log" | head -1)" create "first event"
	assert_eq "$(jq -r .event "$log" | tail -2 | tr '\n' ' ')" "exit delete " "last events"
	assert_eq "$(jq -r .event "$log" | sort | uniq -c | tr -s ' ' | tr '\n' ',')" \
		" 1 create, 1 delete, 4 exec, 1 exit, 1 start," "event counts"
	[[ $(jq -r 'select(.id != $id) | .id' --arg id "$id" "$log") == "" ]] || fail "foreign id in the log"
	run jq -c 'select(.event == "exec") | .argv' "$log"
	assert_eq "${lines[0]}" '["sh","-c","ls / >/dev/null; echo \"a b\" | cat >/dev/null; python3 -c \"pass\""]' "argv 0"
	assert_eq "${lines[1]}" '["ls","/"]' "argv 1"
	assert_eq "${lines[2]}" '["cat"]' "argv 2"
	assert_eq "${lines[3]}" '["python3","-c","pass"]' "argv 3"
}

@test "sandbox: --audit FILE puts the log there" {
	sb --audit "$BATS_TEST_TMPDIR/mine.jsonl" --json "$JSON" -- true
	assert_status 0
	assert_eq "$(jq -r .audit_log "$JSON")" "$BATS_TEST_TMPDIR/mine.jsonl" "audit_log"
	grep -q '"event":"exit"' "$BATS_TEST_TMPDIR/mine.jsonl" || fail "no exit event"
}

@test "sandbox: agentrun's own failures exit 125 with a message, and leave nothing" {
	sb -- /no/such/program
	assert_status 125
	assert_output_contains "/no/such/program"
	sb --timeout soon -- true
	assert_status 125
	assert_output_contains "timeout"
	sb --net inherit -- true
	assert_status 125
	assert_output_contains "forbidden by the host policy"
	sb --mount relative -- true
	assert_status 125
	sb --rootfs "$BATS_TEST_TMPDIR/missing" -- true
	assert_status 125
	sb
	assert_status 125
	[[ -z $(ls -A "$AR_ROOT") ]] || fail "state root not empty: $(ls -A "$AR_ROOT")"
}

@test "sandbox: --help" {
	run "$RUNTIME" sandbox --help
	assert_status 0
	assert_output_contains "agentrun sandbox [options] -- CMD"
	assert_output_contains "--timeout"
}

# wait_running_sandbox: wait until exactly one sandbox runs under $AR_ROOT; prints its ID.
wait_running_sandbox() {
	local tries=100 id
	while ((tries-- > 0)); do
		id=$(ar_raw list -q 2>/dev/null | head -1)
		if [[ -n $id && $(ar_raw state "$id" 2>/dev/null | jq -r .status) == running ]]; then
			echo "$id"
			return 0
		fi
		sleep 0.1
	done
	fail "no running sandbox under $AR_ROOT"
}

# interrupt_test SIGNAL EXPECTED-STATUS
interrupt_test() {
	local sig=$1 want=$2 pid id init rc t0 ms
	"$RUNTIME" --root "$AR_ROOT" sandbox --json "$JSON" -- sh -c 'sleep 300 & sleep 300' \
		</dev/null >"$BATS_TEST_TMPDIR/bg.out" 2>&1 &
	pid=$!
	id=$(wait_running_sandbox) || {
		kill -KILL "$pid"
		return 1
	}
	track_id "$id"
	init=$(init_pid "$id")
	[[ -d /proc/$init ]] || fail "init $init not found"
	t0=$(date +%s%N)
	kill "-$sig" "$pid"
	rc=0
	wait "$pid" || rc=$?
	ms=$(ms_since "$t0")
	cat "$BATS_TEST_TMPDIR/bg.out" >&2
	assert_eq "$rc" "$want" "exit status"
	((ms < 3000)) || fail "cleanup took $ms ms"
	[[ ! -d /proc/$init ]] || fail "the job's init $init survived"
	assert_no_leftovers "$id"
	[[ -z $(ls -A "$AR_ROOT") ]] || fail "state root not empty: $(ls -A "$AR_ROOT")"
}

@test "sandbox: SIGINT to agentrun during a long job cleans up" {
	interrupt_test INT 130
}

@test "sandbox: SIGTERM to agentrun during a long job cleans up" {
	interrupt_test TERM 143
}

@test "sandbox: 20 parallel sandboxes all succeed and leave nothing" {
	local d=$BATS_TEST_TMPDIR/par i
	mkdir -p "$d"
	for i in $(seq 20); do
		(
			timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" sandbox --json "$d/$i.json" \
				-- python3 -c "import sys; print(sum(map(int, sys.argv[1:])))" "$i" "$i" \
				</dev/null >"$d/$i.out" 2>&1
			echo $? >"$d/$i.rc"
		) &
	done
	wait
	local ids=()
	for i in $(seq 20); do
		[[ -s $d/$i.json ]] && ids+=("$(jq -r .id "$d/$i.json")") && track_id "${ids[-1]}"
	done
	for i in $(seq 20); do
		assert_eq "$(cat "$d/$i.rc")" 0 "sandbox $i status ($(cat "$d/$i.out"))"
		assert_eq "$(cat "$d/$i.out")" $((i + i)) "sandbox $i output"
	done
	# each its own ID
	assert_eq "$(printf '%s\n' "${ids[@]}" | sort -u | wc -l)" 20 "distinct IDs"
	for i in "${ids[@]}"; do
		assert_no_leftovers "$i"
	done
	[[ -z $(ls -A "$AR_ROOT") ]] || fail "state root not empty: $(ls -A "$AR_ROOT")"
}

@test "sandbox: the python module's tests pass (tests/python/run.sh)" {
	requires_cmd python3
	run env AGENTRUN_BINARY="$RUNTIME" "$TESTS_DIR/python/run.sh"
	echo "$output" >&2
	assert_status 0
	[[ ${lines[-1]} =~ ^[0-9]+\ passed,\ 0\ failed$ ]] || fail "summary: ${lines[-1]}"
}
