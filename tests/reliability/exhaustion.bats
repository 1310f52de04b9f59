#!/usr/bin/env bats
# Resource exhaustion: a full state root, a full /tmp in the container, the memory and pids
# limits reached, and a monitor whose audit dir is full.  Each fails where it should, says so,
# and leaves the host and the other containers alone.

load helpers-reliability

setup_file() {
	rel_setup_file
}

setup() {
	rel_setup
	OUT=$BATS_TEST_TMPDIR/out
	mkdir -p "$OUT"
	chmod 777 "$OUT"
}

teardown() {
	rel_teardown
}

# small_tmpfs DIR SIZE: a tmpfs of SIZE at DIR, unmounted at teardown.
small_tmpfs() {
	mkdir -p "$1"
	mount -t tmpfs -o "size=$2,mode=0755" tmpfs "$1" || fail "mount tmpfs at $1"
	on_teardown "umount -l '$1'"
}

# with_out: the bundle gets the host dir $OUT at /out, read-write.
with_out() {
	update_config '.mounts += [{destination: "/out", type: "bind", source: $o, options: ["rbind", "rw"]}]' \
		--arg o "$OUT"
}

# cgroup_of ID CONTROLLER: the container's cgroup dir for CONTROLLER (v1), or its v2 dir.
cgroup_of() {
	local d
	d=$(find "/sys/fs/cgroup/$2" -type d -name "$1" 2>/dev/null | head -1)
	[[ -n $d ]] || d=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "$1" -path '*unified*' 2>/dev/null | head -1)
	[[ -n $d ]] || d=$(find /sys/fs/cgroup -maxdepth 6 -type d -name "$1" 2>/dev/null | head -1)
	echo "$d"
}

@test "state root on a full tmpfs: create fails with ENOSPC and leaves nothing" {
	local root=$BATS_TEST_TMPDIR/fullroot id
	small_tmpfs "$root" 64k
	mkdir "$root/state"
	dd if=/dev/zero of="$root/fill" bs=4k 2>/dev/null || true
	[[ $(df --output=avail "$root" | tail -1) -eq 0 ]] || fail "the tmpfs is not full"
	id=$(new_id f)
	run _to_file "$BATS_TEST_TMPDIR/stdio" "$RUNTIME" --root "$root/state" create "$id"
	output=$(cat "$BATS_TEST_TMPDIR/stdio")
	[[ $status -ne 0 ]] || fail "create succeeded on a full state root"
	assert_output_contains "No space left on device"
	[[ -z $(ls -A "$root/state") ]] || fail "state root not empty: $(ls -A "$root/state")"
	wait_gone "$id"
	# the same root works again once there is room
	rm -f "$root/fill"
	run _to_file "$BATS_TEST_TMPDIR/stdio" "$RUNTIME" --root "$root/state" run "$id"
	assert_status 0
	[[ -z $(ls -A "$root/state") ]] || fail "state root not empty after run: $(ls -A "$root/state")"
}

@test "a container filling its /tmp gets ENOSPC, goes on, and the host is fine" {
	local id before after
	annotate tmp-size 4m
	set_cmd 'dd if=/dev/zero of=/tmp/fill bs=1M count=64; echo "dd=$?"; df -k /tmp | tail -1; echo alive'
	before=$(df --output=avail -k / | tail -1)
	id=$(new_id t)
	ar run "$id"
	assert_status 0
	assert_output_contains "No space left on device"
	assert_output_contains "dd=1"
	assert_output_contains "alive"
	after=$(df --output=avail -k / | tail -1)
	# 64 MiB asked for: the host's disk must not have paid for it (other jobs may write a little)
	((before - after < 32768)) || fail "the host lost $((before - after)) KiB"
	wait_gone "$id"
}

@test "a container at its memory limit is OOM-killed, and the kill is reported" {
	local id log
	annotate memory 32m
	update_config '.process.args = ["dd", "if=/dev/zero", "of=/dev/null", "bs=64M", "count=1"]'
	id=$(new_id m)
	ar run "$id"
	assert_status 137
	log=$AUDIT/$id.jsonl
	[[ -f $log ]] || fail "no audit log $log"
	# (jq -s: jq 1.6 -e judges a stream by its last input only)
	jq -se 'any(.[]; .event == "oom" and .oom_kills >= 1)' "$log" >/dev/null ||
		fail "no oom event: $(cat "$log")"
	jq -se 'any(.[]; .event == "exit" and .oom_killed == true and .signal == 9)' "$log" >/dev/null ||
		fail "the exit report does not say OOM: $(grep '"exit"' "$log")"
	wait_gone "$id"
}

@test "sandbox --json reports an OOM kill" {
	local json=$BATS_TEST_TMPDIR/result.json
	run _to_file "$BATS_TEST_TMPDIR/stdio" "$RUNTIME" --root "$AR_ROOT" sandbox --memory 32m \
		--json "$json" -- dd if=/dev/zero of=/dev/null bs=64M count=1
	assert_status 137
	jq -e '.oom_killed == true and .signal == 9' "$json" >/dev/null || fail "result: $(cat "$json")"
	[[ -z $(ls -A "$AR_ROOT") ]] || fail "state root not empty: $(ls -A "$AR_ROOT")"
}

@test "a container at its pids limit cannot fork, and another container is unaffected" {
	local a b cg i
	with_out
	annotate pids 8
	# an inner shell forks until the limit stops it (busybox sh then exits), its sleepers keep
	# the cgroup full, and the outer shell (the init: its exit would end them all) waits
	set_cmd 'sh -c '"'"'i=0; while [ $i -lt 40 ]; do sleep 30 & i=$((i + 1)); done'"'"' 2>/out/a.err; sleep 30'
	a=$(new_id a)
	ar run -d "$a"
	assert_status 0
	cg=$(cgroup_of "$a" pids)
	[[ -n $cg ]] || fail "no pids cgroup for $a"
	for ((i = 0; i < 50; i++)); do
		grep -q "fork" "$OUT/a.err" 2>/dev/null && break
		sleep 0.1
	done
	grep -qi "can't fork\|Resource temporarily unavailable" "$OUT/a.err" ||
		fail "no fork failure reported: $(cat "$OUT/a.err")"
	assert_eq "$(cat "$cg/pids.max")" 8 "pids.max"
	# the outer shell exec'd its last command: 7 of 8 are taken, an exec takes the last one
	ar exec "$a" sh -c 'sleep 1 & wait; echo forked'
	[[ $status -ne 0 && $output != *forked* ]] || fail "a process at the pids limit could fork: $output"
	assert_output_contains "can't fork"
	# meanwhile, a neighbour forks 30 processes with the default limit
	update_config 'del(.annotations["run.agentrun.pids"])'
	set_cmd 'i=0; while [ $i -lt 30 ]; do sleep 1 & i=$((i + 1)); done; wait; echo forked=$i'
	b=$(new_id b)
	ar run "$b"
	assert_status 0
	assert_output_contains "forked=30"
	(($(cat "$cg/pids.current") >= 7)) || fail "the full container lost its processes"
	ar delete --force "$a"
	assert_status 0
	wait_gone "$a"
	wait_gone "$b"
}

# full_audit_job: a container whose audit dir is an 8 KiB tmpfs and whose job makes 300 audited
# execs (far more lines than fit), then sleeps; sets ID, MON (the monitor's pid) and LOG.
full_audit_job() {
	local audit=$BATS_TEST_TMPDIR/auditfs i
	small_tmpfs "$audit" 8k
	write_policy '.audit.dir = $a' --arg a "$audit"
	with_out
	# 300 audited execs: far more lines than 8 KiB holds
	set_cmd 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done; echo "execs=$i" >/out/done; sleep 2'
	ID=$(new_id q)
	ar create "$ID"
	assert_status 0
	MON=$(jq -r .monitorPid "$AR_ROOT/$ID/state.json")
	[[ $MON -gt 0 ]] || fail "no monitor"
	LOG=$audit/$ID.jsonl
	ar start "$ID"
	assert_status 0
	for ((i = 0; i < 100; i++)); do
		[[ -s $OUT/done ]] && break
		sleep 0.1
	done
	[[ $(df --output=avail "$audit" | tail -1) -eq 0 ]] || fail "the audit dir did not fill up"
}

@test "a monitor whose audit dir is full stops writing, does not crash, and the job runs" {
	full_audit_job
	# every exec waited for the monitor's answer: 300 of them done means it kept answering
	assert_eq "$(cat "$OUT/done" 2>/dev/null)" "execs=300" "the job's execs"
	kill -0 "$MON" 2>/dev/null || fail "the monitor died with a full audit dir"
	[[ $(awk '/^State:/ { print $2 }' "/proc/$MON/status") != Z ]] || fail "the monitor is a zombie"
	ar state "$ID"
	assert_status 0
	assert_eq "$(jq -r .status <<<"$output")" running "status while the job sleeps"
	ar delete --force "$ID"
	assert_status 0
	wait_gone "$ID"
}

@test "an audit log cut by a full disk still ends with a whole line" {
	full_audit_job
	# a line the disk could not take whole must not be left half-written
	jq -e . "$LOG" >/dev/null || fail "broken audit log, it ends with: $(tail -c 200 "$LOG")"
	ar delete --force "$ID"
	assert_status 0
	wait_gone "$ID"
}

@test "the audit cap: a log at max_bytes stops, counts what it dropped, and ends with it" {
	local id log size n
	# (the monitor keeps 4 KiB below the cap for its last lines: a cap under 8 KiB has no room)
	write_policy '.audit.max_bytes = 16384'
	set_cmd 'i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i + 1)); done; echo execs=$i'
	id=$(new_id k)
	ar run "$id"
	assert_status 0
	assert_output_contains "execs=300"
	log=$AUDIT/$id.jsonl
	size=$(stat -c %s "$log")
	((size <= 16384)) || fail "the log is $size bytes, above max_bytes 16384"
	n=$(jq -r 'select(.event == "dropped") | .count' "$log")
	[[ $n -gt 0 ]] || fail "no dropped count in the log: $(tail -3 "$log")"
	jq -se 'any(.[]; .event == "exit" and .exit_code == 0)' "$log" >/dev/null ||
		fail "no exit report: $(tail -3 "$log")"
	jq -e . "$log" >/dev/null || fail "broken audit log"
	wait_gone "$id"
}
