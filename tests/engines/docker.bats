#!/usr/bin/env bats
# Docker (dockerd -> containerd -> containerd-shim-runc-v2 -> agentrun), with
# contrib/docker/daemon.json.  Every container runs with --network none: the
# test's dockerd has no bridge.

load lib

setup_file() {
	eng_setup_file docker
}

teardown_file() {
	eng_teardown_file
}

setup() {
	eng_setup docker
	NAMES=()
}

teardown() {
	((${#NAMES[@]} == 0)) || dk rm -f "${NAMES[@]}" >/dev/null 2>&1 || true
}

# start_sleeper: a running container; sets NAME, ID and PID.
start_sleeper() {
	NAME=$(uniq_name dk)
	NAMES+=("$NAME")
	log_run dk run -d --name "$NAME" --runtime agentrun --network none "$IMAGE_DOCKER" sleep 1000
	assert_success || return
	ID=${lines[-1]}
	PID=$(dk inspect -f '{{.State.Pid}}' "$ID")
}

# agentrun's state dir for a container, under the root that the shim passes.
state_dir() {
	compgen -G "$ENG_DIR/docker/exec/runtime-*/moby/$1" || true
}

@test "docker run --rm: agentrun runs the container, hardened" {
	log_run dk run --rm --cidfile "$BATS_TEST_TMPDIR/cid" --runtime agentrun --network none \
		"$IMAGE_DOCKER" sh -c "echo hello; $PROBE"
	assert_success
	assert_output_contains hello
	assert_agentrun_view
	local id
	id=$(cat "$BATS_TEST_TMPDIR/cid")
	# The shim's calls, with the global flags it always passes.
	assert_called "--root [^ ]+ --log [^ ]+/log.json --log-format json create --bundle [^ ]+ --pid-file [^ ]+/init.pid $id\$"
	assert_called "--log-format json start $id\$"
	assert_called "--log-format json delete $id\$"
	assert_audited "$id"
	[[ -z $(state_dir "$id") ]] || fail "agentrun's state for $id is left: $(state_dir "$id")"
}

@test "docker run: the container's exit code comes back" {
	log_run dk run --rm --runtime agentrun --network none "$IMAGE_DOCKER" sh -c 'exit 7'
	assert_status 7
}

@test "docker run --network none: only lo, and Docker's prestart hook ran" {
	start_sleeper
	log_run dk exec "$ID" cat /proc/net/dev
	assert_success
	assert_output_contains "lo:"
	local ifaces
	ifaces=$(grep -c ':' <<<"$output")
	assert_eq "$ifaces" 1 "interfaces in the container"
	# Docker puts libnetwork-setkey in the bundle even with --network none; create
	# succeeded, so agentrun ran it.
	local bundle=$ENG_DIR/docker/exec/containerd/daemon/io.containerd.runtime.v2.task/moby/$ID
	run jq -r '.hooks.prestart[]?.args | join(" ")' "$bundle/config.json"
	assert_output_contains libnetwork-setkey
}

@test "docker run -d + exec: the exec'd process runs under agentrun's policy" {
	start_sleeper
	log_run dk exec "$ID" sh -c "echo in-exec; $PROBE"
	assert_success
	assert_output_contains in-exec
	assert_called "exec --process [^ ]+ --detach --pid-file [^ ]+ $ID\$"
	assert_agentrun_view
}

@test "docker exec: no capability beyond the container's init" {
	start_sleeper
	log_run dk exec "$ID" sh -c "$CAPS_PROBE"
	assert_success
	assert_caps_within_init
}

@test "docker exec: the exec'd process's exit code comes back" {
	start_sleeper
	log_run dk exec "$ID" sh -c 'exit 3'
	assert_status 3
}

@test "docker exec -t: the process gets a terminal" {
	requires_script
	start_sleeper
	log_run with_tty "$DOCKER" -H "$DOCKER_HOST" exec -t "$ID" sh -c 'tty; echo tty-ok'
	assert_success
	assert_output_matches '^/dev/pts/[0-9]+$'
	assert_output_contains tty-ok
	assert_called "exec --process [^ ]+ --console-socket [^ ]+ --detach --pid-file [^ ]+ $ID\$"
}

@test "docker top: agentrun ps --format json lists the processes" {
	start_sleeper
	log_run dk top "$ID"
	assert_success
	assert_output_contains "sleep 1000"
	assert_called "ps --format json $ID\$"
}

@test "docker pause and unpause" {
	start_sleeper
	log_run dk pause "$ID"
	assert_success
	assert_called "pause $ID\$"
	assert_eq "$(dk inspect -f '{{.State.Status}}' "$ID")" paused "docker's status"
	local freezer
	freezer=$(cgroup_dir_of "$PID" freezer)
	if [[ -f $freezer/freezer.state ]]; then
		assert_eq "$(cat "$freezer/freezer.state")" FROZEN "$freezer/freezer.state"
	fi
	log_run dk unpause "$ID"
	assert_success
	assert_called "resume $ID\$"
	assert_eq "$(dk inspect -f '{{.State.Status}}' "$ID")" running "docker's status"
	log_run dk exec "$ID" echo thawed
	assert_success
	assert_output_contains thawed
}

@test "docker update --memory: agentrun update --resources - applies the limit" {
	start_sleeper
	log_run dk update --memory 64m --memory-swap 64m "$ID"
	assert_success
	assert_called "update --resources - $ID\$"
	calls_since_mark | grep -q 'stdin: .*"limit":67108864' ||
		fail "update's stdin did not carry the memory limit"
	assert_eq "$(memory_limit_of "$PID")" 67108864 "the container's memory limit"
}

@test "docker stop: SIGTERM through agentrun kill, exit 0" {
	NAME=$(uniq_name dk)
	NAMES+=("$NAME")
	log_run dk run -d --name "$NAME" --runtime agentrun --network none "$IMAGE_DOCKER" \
		sh -c 'trap "exit 0" TERM; echo ready; while :; do sleep 0.1; done'
	assert_success
	ID=${lines[-1]}
	wait_for_ready dk logs "$ID"
	log_run dk stop -t 20 "$ID"
	assert_success
	assert_called "kill $ID 15\$"
	assert_eq "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$ID")" "exited 0" "state"
	if calls_since_mark | grep -qE " argv: .*kill $ID 9\$"; then
		fail "docker had to SIGKILL"
	fi
	[[ -z $(state_dir "$ID") ]] || fail "agentrun's state for $ID is left"
}

@test "docker kill: SIGKILL, exit 137" {
	start_sleeper
	log_run dk kill "$ID"
	assert_success
	assert_called "kill $ID 9\$"
	local n=50
	while ((n-- > 0)) && [[ $(dk inspect -f '{{.State.Status}}' "$ID") != exited ]]; do sleep 0.1; done
	assert_eq "$(dk inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$ID")" "exited 137" "state"
}

@test "docker rm -f of a running container removes every trace" {
	start_sleeper
	local mem
	mem=$(cgroup_dir_of "$PID" memory)
	[[ -d $mem ]] || fail "no memory cgroup for the container at '$mem'"
	log_run dk rm -f "$ID"
	assert_success
	assert_called "kill $ID 9\$"
	assert_called "delete $ID\$"
	run dk inspect "$ID"
	[[ $status -ne 0 ]] || fail "the container still exists"
	[[ -z $(state_dir "$ID") ]] || fail "agentrun's state is left: $(state_dir "$ID")"
	[[ ! -d $mem ]] || fail "the container's cgroup is left: $mem"
	! kill -0 "$PID" 2>/dev/null || fail "the container's init ($PID) still runs"
	assert_audited "$ID"
}

@test "docker run of a missing executable shows agentrun's error" {
	log_run ! dk run --rm --runtime agentrun --network none "$IMAGE_DOCKER" /nonexistent
	assert_output_contains /nonexistent
	grep -qiE 'no such file or directory|executable file not found' <<<"$output" ||
		fail "no 'not found' text in docker's output: $output"
	log_run ! dk run --rm --runtime agentrun --network none "$IMAGE_DOCKER" nonexistent
	assert_output_contains 'executable file not found'
}

@test "docker run of a missing executable exits 127, as with runc" {
	# The docker CLI maps the daemon's error to 127 only when it contains, in
	# lower case, "no such file or directory" or "executable file not found".
	log_run -127 dk run --rm --runtime agentrun --network none "$IMAGE_DOCKER" /nonexistent
	log_run -127 dk run --rm --runtime agentrun --network none "$IMAGE_DOCKER" nonexistent
}

@test "docker run of a directory exits 126, as with runc" {
	# ... and to 126 when it contains "permission denied", in lower case.
	log_run -126 dk run --rm --runtime agentrun --network none "$IMAGE_DOCKER" /bin
	grep -qi 'permission denied' <<<"$output" || fail "no 'permission denied' in: $output"
}

@test "docker: the shim's last delete --force of a deleted container succeeds, as with runc" {
	log_run dk run --rm --cidfile "$BATS_TEST_TMPDIR/cid" --runtime agentrun --network none \
		"$IMAGE_DOCKER" true
	assert_success
	local id
	id=$(cat "$BATS_TEST_TMPDIR/cid")
	assert_called "delete --force $id\$"
	assert_eq "$(exit_of "delete --force $id\$")" 0 "exit code of delete --force $id"
}
