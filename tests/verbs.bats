#!/usr/bin/env bats
# The verbs engines call besides the life cycle: ps, pause/resume, update, events, features,
# and checkpoint/restore (not supported).  Every test runs under a passthrough host policy of
# its own (tests/verbs-helpers.bash), except where the test is about the policy.

load helpers
load verbs-helpers

setup() { verbs_setup; }

# exec_sleeper: exec -d a `sleep` in the container; prints its host pid.
exec_sleeper() {
	local pidfile=$BATS_TEST_TMPDIR/exec-$RANDOM.pid
	ar_raw exec -d --pid-file "$pidfile" "$CID" sleep 500 </dev/null >/dev/null 2>&1 ||
		fail "exec -d failed"
	cat "$pidfile"
}

# ---------------------------------------------------------------------------
# ps

@test "ps: --format json lists the init and an exec'd process (host pids)" {
	start_sleeper
	local init epid
	init=$(init_pid "$CID")
	epid=$(exec_sleeper)
	ar_ok ps --format json "$CID"
	jq -e 'type == "array"' <<<"$output" >/dev/null || fail "not a JSON array: $output"
	jq -e --argjson p "$init" 'index($p) != null' <<<"$output" >/dev/null ||
		fail "init $init not in $output"
	jq -e --argjson p "$epid" 'index($p) != null' <<<"$output" >/dev/null ||
		fail "exec'd $epid not in $output"
	ar_ok ps -f json "$CID"
	[[ $(jq length <<<"$output") -eq 2 ]] || fail "expected 2 pids: $output"
}

@test "ps: table is the host's ps -ef header plus the container's lines" {
	requires_cmd ps
	start_sleeper
	local init
	init=$(init_pid "$CID")
	ar_ok ps "$CID"
	local header=${lines[0]}
	[[ $header == *UID*PID*PPID*CMD* ]] || fail "no ps -ef header: $header"
	[[ ${#lines[@]} -eq 2 ]] || fail "expected the header and one process: $output"
	[[ $(awk '{print $2}' <<<"${lines[1]}") == "$init" ]] || fail "not the init's line: ${lines[1]}"
	[[ ${lines[1]} == *"sleep 1000"* ]]
	# the host's processes are filtered out
	assert_output_not_contains " bats"
}

@test "ps: table passes ps options through" {
	requires_cmd ps
	start_sleeper
	local init
	init=$(init_pid "$CID")
	ar_ok ps "$CID" -o pid,comm
	[[ $(awk '{print $1}' <<<"${lines[0]}") == PID ]] || fail "header: ${lines[0]}"
	[[ $(awk '{print $1, $2}' <<<"${lines[1]}") == "$init sleep" ]] || fail "line: ${lines[1]}"
}

@test "ps: --format must be table or json" {
	start_sleeper
	ar ps --format yaml "$CID"
	assert_status 1
}

# ---------------------------------------------------------------------------
# pause / resume

@test "pause: state paused and the processes frozen; resume: running again" {
	start_sleeper
	local init epid
	init=$(init_pid "$CID")
	epid=$(exec_sleeper)
	ar_ok pause "$CID"
	[[ $(state_field "$CID" status) == paused ]]
	is_frozen "$init" || fail "init $init is not frozen"
	# a frozen task is in the refrigerator: D on v1, S with the freezer's state on v2
	[[ $(awk '/^State:/ {print $2}' "/proc/$epid/status") == [DST] ]]
	ar_ok list --format json
	[[ $(jq -r --arg id "$CID" '.[] | select(.id == $id) | .status' <<<"$output") == paused ]]

	ar_ok resume "$CID"
	[[ $(state_field "$CID" status) == running ]]
	! is_frozen "$init" || fail "init $init is still frozen"
	# it runs: it takes a signal at once
	kill -TERM "$epid"
	wait_pid_gone "$epid" 5
}

@test "pause: errors say container not running / not paused" {
	start_sleeper
	ar resume "$CID"
	assert_status 1
	assert_output_contains "container not paused"

	ar_ok pause "$CID"
	ar pause "$CID"
	assert_status 1
	assert_output_contains "container not running"
	ar_ok resume "$CID"

	ar_ok kill "$CID" KILL
	wait_for_state "$CID" stopped
	ar pause "$CID"
	assert_status 1
	assert_output_contains "container not running"
}

@test "pause: a paused container can be killed and deleted" {
	start_sleeper
	ar_ok pause "$CID"
	ar_ok delete --force "$CID"
	ar state "$CID"
	assert_output_contains "does not exist"
	assert_no_leftovers "$CID"
}

# ---------------------------------------------------------------------------
# update

@test "update: --memory 64m lands in the container's memory cgroup" {
	requires_cgroup memory
	start_sleeper
	ar_ok update --memory 64m "$CID"
	[[ $(memory_limit) -eq $((64 << 20)) ]] || fail "memory limit: $(memory_limit)"
}

@test "update: --pids-limit 10 lands in pids.max" {
	requires_cgroup pids
	start_sleeper
	ar_ok update --pids-limit 10 "$CID"
	[[ $(cat "$(cg_file pids pids.max)") == 10 ]]
}

@test "update: --cpu-period and --cpu-quota" {
	requires_cgroup cpu
	start_sleeper
	ar_ok update --cpu-period 100000 --cpu-quota 50000 "$CID"
	if [[ -e $(cg_file cpu cpu.max) ]]; then
		[[ $(cat "$(cg_file cpu cpu.max)") == "50000 100000" ]]
	else
		[[ $(cat "$(cg_file cpu cpu.cfs_quota_us)") == 50000 ]]
		[[ $(cat "$(cg_file cpu cpu.cfs_period_us)") == 100000 ]]
	fi
}

@test "update: --resources - reads LinuxResources JSON from stdin" {
	requires_cgroup memory
	requires_cgroup pids
	start_sleeper
	run bash -c "echo '{\"memory\": {\"limit\": 100663296}, \"pids\": {\"limit\": 42}}' |
		timeout 30 '$RUNTIME' --root '$AR_ROOT' update --resources - '$CID'"
	assert_status 0
	[[ $(memory_limit) -eq 100663296 ]] || fail "memory limit: $(memory_limit)"
	[[ $(cat "$(cg_file pids pids.max)") == 42 ]]
}

@test "update: -r FILE, as Podman passes it" {
	requires_cgroup pids
	start_sleeper
	echo '{"pids": {"limit": 33}}' >"$BATS_TEST_TMPDIR/res.json"
	ar_ok update --resources="$BATS_TEST_TMPDIR/res.json" "$CID"
	[[ $(cat "$(cg_file pids pids.max)") == 33 ]]
	ar_ok update -r "$BATS_TEST_TMPDIR/res.json" "$CID"
}

@test "update: zeros (as Docker sends them) leave the limits as they are" {
	requires_cgroup memory
	requires_cgroup pids
	start_sleeper
	ar_ok update --memory 64m --pids-limit 20 "$CID"
	run bash -c "echo '{\"memory\": {\"limit\": 0, \"reservation\": 0, \"swap\": 0},
		\"cpu\": {\"shares\": 0, \"quota\": 0, \"period\": 0, \"cpus\": \"\", \"mems\": \"\"},
		\"blockIO\": {\"weight\": 0}, \"pids\": {\"limit\": 0}}' |
		timeout 30 '$RUNTIME' --root '$AR_ROOT' update -r - '$CID'"
	assert_status 0
	[[ $(memory_limit) -eq $((64 << 20)) ]] || fail "memory limit: $(memory_limit)"
	[[ $(cat "$(cg_file pids pids.max)") == 20 ]]
}

@test "update: the saved effective spec follows the update" {
	agentrun_only "agentrun keeps the effective spec in its state dir"
	start_sleeper
	ar_ok update --memory 96m --pids-limit 12 "$CID"
	local cfg=$AR_ROOT/$CID/config.json
	[[ $(jq .linux.resources.memory.limit "$cfg") -eq $((96 << 20)) ]]
	[[ $(jq .linux.resources.pids.limit "$cfg") -eq 12 ]]
	# and the audit log has the update
	grep -q '"event":"update"' "$BATS_TEST_TMPDIR"/audit/*.jsonl
}

@test "update: bad values and Intel RDT are refused" {
	start_sleeper
	ar update --memory lots "$CID"
	assert_status 1
	assert_output_contains "memory"
	ar update --pids-limit x "$CID"
	assert_status 1
	ar update --l3-cache-schema "L3:0=f" "$CID"
	assert_status 1
	! is_agentrun || assert_output_contains "Intel RDT is not supported"
	run bash -c "echo '{\"memory\": {\"limit\": \"big\"}}' |
		timeout 30 '$RUNTIME' --root '$AR_ROOT' update -r - '$CID'"
	assert_status 1
	! is_agentrun || assert_output_contains "memory.limit"
}

@test "update: a stopped container is not running" {
	start_sleeper
	ar_ok kill "$CID" KILL
	wait_for_state "$CID" stopped
	ar update --pids-limit 10 "$CID"
	assert_status 1
	assert_output_contains "container not running"
}

@test "update: values above the host policy's maxima are refused" {
	agentrun_only "host policy"
	requires_cgroup memory
	requires_cgroup pids
	write_policy "$POLICY" '.controls.limits = true | .maxima = {memory: "256m", pids: 64, cpus: 1}'
	start_sleeper
	local mem pids
	mem=$(memory_limit)
	pids=$(cat "$(cg_file pids pids.max)")

	ar update --memory 512m "$CID"
	assert_status 1
	assert_output_contains "memory.limit"
	assert_output_contains "maxima.memory"
	ar update --memory -1 "$CID"
	assert_status 1
	ar update --pids-limit 1000 "$CID"
	assert_status 1
	assert_output_contains "pids.limit"
	run bash -c "echo '{\"pids\": {\"limit\": -1}}' |
		timeout 30 '$RUNTIME' --root '$AR_ROOT' update -r - '$CID'"
	assert_status 1
	assert_output_contains "pids.limit"
	ar update --cpu-quota 200000 --cpu-period 100000 "$CID"
	assert_status 1
	assert_output_contains "maxima.cpus"
	run bash -c "echo '{\"unified\": {\"pids.max\": \"max\"}}' |
		timeout 30 '$RUNTIME' --root '$AR_ROOT' update -r - '$CID'"
	assert_status 1
	# nothing changed
	[[ $(memory_limit) == "$mem" ]]
	[[ $(cat "$(cg_file pids pids.max)") == "$pids" ]]

	# within the maxima is fine
	ar_ok update --memory 128m --pids-limit 32 "$CID"
	[[ $(memory_limit) -eq $((128 << 20)) ]]
	[[ $(cat "$(cg_file pids pids.max)") == 32 ]]
}

# ---------------------------------------------------------------------------
# events

@test "events --stats: one line of runc's stats JSON" {
	start_sleeper
	ar_ok events --stats "$CID"
	[[ ${#lines[@]} -eq 1 ]] || fail "expected one line: $output"
	jq -e --arg id "$CID" '.type == "stats" and .id == $id' <<<"$output" >/dev/null ||
		fail "not a stats event: $output"
	jq -e '.data.memory.usage.usage > 0' <<<"$output" >/dev/null || fail "no memory usage: $output"
	jq -e '.data.pids.current >= 1' <<<"$output" >/dev/null || fail "no pids: $output"
	jq -e '.data.cpu.usage | has("kernel") and has("user")' <<<"$output" >/dev/null
	jq -e '.data | has("blkio")' <<<"$output" >/dev/null
}

@test "events: a line per interval until the container stops" {
	not_on runc "runc events keeps running after the container stops"
	start_sleeper
	local out=$BATS_TEST_TMPDIR/events.out
	timeout 30 "$RUNTIME" --root "$AR_ROOT" events --interval 200ms "$CID" >"$out" 2>&1 &
	local pid=$!
	wait_for_lines "$out" 2 10
	ar_ok kill "$CID" KILL
	wait_pid_gone "$pid" 10
	wait "$pid" || fail "events exited with $?: $(cat "$out")"
	jq -se 'all(.[]; .type == "stats")' "$out" >/dev/null || fail "bad events: $(cat "$out")"
}

@test "events: an oom event when the cgroup's OOM killer strikes" {
	not_on runc "runc events keeps running after the container stops"
	requires_cgroup memory
	start_sleeper
	ar_ok update --memory 16m --memory-swap 16m "$CID"
	local out=$BATS_TEST_TMPDIR/events.out
	timeout 30 "$RUNTIME" --root "$AR_ROOT" events --interval 10s "$CID" >"$out" 2>&1 &
	local pid=$!
	sleep 0.5
	# a shell variable of 64 MB: no device needed
	ar exec "$CID" sh -c 'a=$(yes | head -c 64000000); echo ${#a}'
	[[ $status -ne 0 ]] || fail "the memory hog was not killed"
	local tries=30
	while ((tries-- > 0)) && ! grep -q '"oom"' "$out"; do
		sleep 0.1
	done
	ar_ok kill "$CID" KILL
	wait_pid_gone "$pid" 10
	jq -se --arg id "$CID" 'any(.[]; .type == "oom" and .id == $id)' "$out" >/dev/null ||
		fail "no oom event: $(cat "$out")"
}

@test "events: a stopped container is not running; --interval must be a duration" {
	start_sleeper
	ar events --interval soon "$CID"
	assert_status 1
	ar_ok kill "$CID" KILL
	wait_for_state "$CID" stopped
	ar events --stats "$CID"
	assert_status 1
	assert_output_contains "not running" # runc: "container with id ID is not running"
	! is_agentrun || assert_output_contains "container not running"
}

# ---------------------------------------------------------------------------
# features, checkpoint, restore

@test "features: the runtime-spec features document" {
	agentrun_only "its own versions and annotations"
	ar_ok features
	jq -e '.ociVersionMin == "1.0.0" and .ociVersionMax == "1.2.0"' <<<"$output" >/dev/null ||
		fail "versions: $output"
	[[ $(jq -c .hooks <<<"$output") == '["prestart","createRuntime","createContainer","startContainer","poststart","poststop"]' ]]
	jq -e '.mountOptions | index("rbind") and index("rro") and index("tmpcopyup")' <<<"$output" >/dev/null
	jq -e '.linux.namespaces | length == 8' <<<"$output" >/dev/null
	jq -e '.linux.capabilities | index("CAP_SYS_ADMIN") and index("CAP_CHECKPOINT_RESTORE")' <<<"$output" >/dev/null
	jq -e '.linux.cgroup == {v1: true, v2: true, systemd: false, systemdUser: false, rdma: false}' <<<"$output" >/dev/null
	jq -e '.linux.seccomp.enabled and (.linux.seccomp.actions | index("SCMP_ACT_NOTIFY"))' <<<"$output" >/dev/null
	jq -e '.linux.seccomp.archs | index("SCMP_ARCH_X86_64") and index("SCMP_ARCH_X32")' <<<"$output" >/dev/null
	jq -e '.linux.seccomp.supportedFlags - .linux.seccomp.knownFlags == []' <<<"$output" >/dev/null
	jq -e '.linux.apparmor.enabled == false and .linux.selinux.enabled == false' <<<"$output" >/dev/null
	jq -e '.linux.intelRdt.enabled == false' <<<"$output" >/dev/null
	jq -e '.annotations["io.github.seccomp.libseccomp.version"] | test("^[0-9]+\\.[0-9]+\\.[0-9]+$")' <<<"$output" >/dev/null
	local k
	for k in network rootfs seccomp audit timeout memory pids cpus tmp-size; do
		jq -e --arg k "run.agentrun.$k" '.annotations | has($k)' <<<"$output" >/dev/null ||
			fail "annotation run.agentrun.$k missing"
	done
}

@test "checkpoint and restore: not supported, exit 1" {
	agentrun_only "runc has CRIU"
	start_sleeper
	ar checkpoint "$CID"
	assert_status 1
	assert_output_contains "agentrun: checkpoint is not supported"
	ar checkpoint --image-path "$BATS_TEST_TMPDIR/img" --leave-running "$CID"
	assert_status 1
	assert_output_contains "checkpoint is not supported"
	ar restore --image-path "$BATS_TEST_TMPDIR/img" "$CID"
	assert_status 1
	assert_output_contains "restore is not supported"
	[[ $(state_field "$CID" status) == running ]]
}

# ---------------------------------------------------------------------------
# unknown containers

@test "every verb: an unknown ID does not exist" {
	local id=nosuch$RANDOM verb
	for verb in "ps" "ps --format json" "pause" "resume" "update --memory 64m" \
		"update --pids-limit 10" "events --stats" "events"; do
		# shellcheck disable=SC2086
		ar $verb "$id"
		assert_status 1
		assert_output_contains "does not exist" # runc: "container does not exist"
		! is_agentrun || assert_output_contains "container \"$id\" does not exist"
	done
}
