#!/usr/bin/env bats
# Podman (podman -> conmon -> agentrun), with contrib/podman/containers.conf.
# Podman calls agentrun without --root: its state is under /run/agentrun.

load lib

setup_file() {
	eng_setup_file podman
}

teardown_file() {
	eng_teardown_file
}

setup() {
	eng_setup podman
	NAMES=()
}

teardown() {
	((${#NAMES[@]} == 0)) || pm rm -f -t 0 "${NAMES[@]}" >/dev/null 2>&1 || true
}

# start_sleeper: a running container; sets NAME and ID.
start_sleeper() {
	NAME=$(uniq_name pm)
	NAMES+=("$NAME")
	log_run pm run -d --name "$NAME" --network none "$IMAGE_PODMAN" sleep 1000
	assert_success || return
	ID=${lines[-1]}
}

@test "podman run --rm: agentrun runs the container, hardened" {
	log_run pm run --rm --cidfile "$BATS_TEST_TMPDIR/cid" --network none "$IMAGE_PODMAN" \
		sh -c "echo hello; $PROBE"
	assert_success
	assert_output_contains hello
	assert_agentrun_view
	local id
	id=$(cat "$BATS_TEST_TMPDIR/cid")
	# conmon passes --log-format=json --log because containers.conf lists agentrun
	# in runtime_supports_json.
	assert_called "--log-format=json --log [^ ]+ create --bundle [^ ]+ --pid-file [^ ]+ $id\$"
	assert_called "start $id\$"
	assert_called "delete --force $id\$"
	assert_audited "$id"
	[[ ! -e /run/agentrun/$id ]] || fail "agentrun's state for $id is left"
}

@test "podman run: the container's exit code comes back" {
	log_run -7 pm run --rm --network none "$IMAGE_PODMAN" sh -c 'exit 7'
}

@test "podman exec: the exec'd process runs under agentrun's policy" {
	start_sleeper
	log_run pm exec "$ID" sh -c "echo in-exec; $PROBE"
	assert_success
	assert_output_contains in-exec
	assert_called "exec --pid-file [^ ]+ --process [^ ]+ --detach $ID\$"
	assert_agentrun_view
}

@test "podman exec: no capability beyond the container's init" {
	start_sleeper
	log_run pm exec "$ID" sh -c "$CAPS_PROBE"
	assert_success
	assert_caps_within_init
}

@test "podman exec: the exit code comes back" {
	start_sleeper
	log_run -3 pm exec "$ID" sh -c 'exit 3'
}

@test "podman exec -t: the process gets a terminal" {
	requires_script
	start_sleeper
	log_run with_tty env CONTAINERS_CONF="$CONTAINERS_CONF" CONTAINERS_STORAGE_CONF="$CONTAINERS_STORAGE_CONF" \
		podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/run" --tmpdir "$PODMAN_DIR/tmp" \
		--runtime agentrun exec -t "$ID" sh -c 'tty; echo tty-ok'
	assert_success
	assert_output_matches '^/dev/pts/[0-9]+$'
	assert_output_contains tty-ok
	assert_called "exec .*--tty .*--console-socket [^ ]+ .*$ID\$"
}

@test "podman stop: kill 15, then kill 9, then podman rm deletes it" {
	# sleep as pid 1 ignores SIGTERM, so podman has to follow up with SIGKILL.
	start_sleeper
	log_run pm stop -t 1 "$ID"
	assert_success
	assert_called "kill $ID 15\$"
	assert_called "kill $ID 9\$"
	assert_eq "$(pm inspect -f '{{.State.Status}}' "$ID")" exited "podman's status"
	log_run pm rm "$ID"
	assert_success
	assert_called "delete --force $ID\$"
	run pm inspect "$ID"
	[[ $status -ne 0 ]] || fail "the container still exists"
	[[ ! -e /run/agentrun/$ID ]] || fail "agentrun's state for $ID is left"
	assert_audited "$ID"
}

@test "podman stop: a process that handles SIGTERM exits 0" {
	NAME=$(uniq_name pm)
	NAMES+=("$NAME")
	log_run pm run -d --name "$NAME" --network none "$IMAGE_PODMAN" \
		sh -c 'trap "exit 0" TERM; echo ready; while :; do sleep 0.1; done'
	assert_success
	ID=${lines[-1]}
	wait_for_ready pm logs "$ID"
	log_run pm stop -t 20 "$ID"
	assert_success
	assert_eq "$(pm inspect -f '{{.State.Status}} {{.State.ExitCode}}' "$ID")" "exited 0" "state"
}

@test "podman run of a missing executable: agentrun's error, exit 127" {
	log_run -127 pm run --rm --network none "$IMAGE_PODMAN" /nonexistent
	assert_output_contains /nonexistent
	grep -qiE 'no such file or directory' <<<"$output" ||
		fail "no 'no such file or directory' in podman's output: $output"
	log_run -127 pm run --rm --network none "$IMAGE_PODMAN" nonexistent
	assert_output_contains 'executable file not found'
}

@test "podman: the clean-up after a failed create reports no error" {
	# Podman runs `delete --force` after a failed create; runc exits 0 there
	# when the container does not exist.
	log_run -127 pm run --rm --network none "$IMAGE_PODMAN" /nonexistent
	[[ $output != *"does not exist"* ]] || fail "agentrun's delete --force complained: $output"
	[[ $output != *"level=error"* ]] || fail "podman logged an error: $output"
}

@test "podman run of a directory: permission denied, exit 126" {
	log_run -126 pm run --rm --network none "$IMAGE_PODMAN" /bin
	grep -qiE 'permission denied' <<<"$output" ||
		fail "no 'permission denied' in podman's output: $output"
}

@test "podman info: agentrun --version" {
	log_run pm info --format '{{.Host.OCIRuntime.Name}} {{.Host.OCIRuntime.Version}}'
	assert_success
	assert_output_contains "agentrun"
	assert_output_contains "agentrun version"
}

@test "podman pause and unpause" {
	start_sleeper
	log_run pm pause "$ID"
	assert_success
	assert_called "pause $ID\$"
	assert_eq "$(pm inspect -f '{{.State.Status}}' "$ID")" paused "podman's status"
	log_run pm unpause "$ID"
	assert_success
	assert_called "resume $ID\$"
	log_run pm exec "$ID" echo thawed
	assert_success
	assert_output_contains thawed
}

@test "podman update --memory: agentrun update --resources FILE applies the limit" {
	start_sleeper
	local pid
	pid=$(pm inspect -f '{{.State.Pid}}' "$ID")
	log_run pm update --memory 64m --memory-swap 64m "$ID"
	assert_success
	assert_called "update --resources[= ][^ ]+ $ID\$"
	assert_eq "$(memory_limit_of "$pid")" 67108864 "the container's memory limit"
}
