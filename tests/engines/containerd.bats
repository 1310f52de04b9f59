#!/usr/bin/env bats
# containerd + ctr (ctr -> containerd -> containerd-shim-runc-v2 -> agentrun).
# ctr names the runtime binary itself (--runc-binary); the CRI runtime handler in
# contrib/containerd/config.toml is imported by the test's containerd and
# checked with `containerd config dump` (the test's containerd has no CRI).

load lib

setup_file() {
	eng_setup_file containerd
}

teardown_file() {
	eng_teardown_file
}

setup() {
	eng_setup containerd
	TASKS=()
}

teardown() {
	local t
	for t in "${TASKS[@]}"; do
		cr task kill -a -s KILL "$t" >/dev/null 2>&1 || true
		cr task rm -f "$t" >/dev/null 2>&1 || true
		cr container rm "$t" >/dev/null 2>&1 || true
	done
}

# start_sleeper: a running task; sets ID and PID.
start_sleeper() {
	ID=$(uniq_name ctr)
	TASKS+=("$ID")
	log_run cr_run -d --null-io "$ID" sleep 1000
	assert_success || return
	PID=$(cr task ls | awk -v id="$ID" '$1 == id {print $2}')
	[[ -n $PID ]] || fail "no task $ID in ctr task ls"
}

@test "ctr run --rm --runc-binary: agentrun runs the container, hardened" {
	local id
	id=$(uniq_name ctr)
	log_run cr_run --rm "$id" sh -c "echo hello; $PROBE"
	assert_success
	assert_output_contains hello
	assert_agentrun_view
	assert_called "--root $CTR_RUNC_ROOT/default --log [^ ]+/log.json --log-format json create --bundle [^ ]+ --pid-file [^ ]+/init.pid $id\$"
	assert_called "start $id\$"
	assert_called "delete $id\$"
	assert_audited "$id"
	[[ ! -e $CTR_RUNC_ROOT/default/$id ]] || fail "agentrun's state for $id is left"
}

@test "ctr run: the container's exit code comes back" {
	log_run -7 cr_run --rm "$(uniq_name ctr)" sh -c 'exit 7'
}

@test "ctr task exec: the process runs under agentrun's policy" {
	start_sleeper
	log_run cr task exec --exec-id e1 "$ID" sh -c "echo in-exec; $PROBE"
	assert_success
	assert_output_contains in-exec
	assert_called "exec --process [^ ]+ --detach --pid-file [^ ]+ $ID\$"
	assert_agentrun_view
}

@test "ctr task exec: no capability beyond the container's init" {
	start_sleeper
	log_run cr task exec --exec-id e2 "$ID" sh -c "$CAPS_PROBE"
	assert_success
	assert_caps_within_init
}

@test "ctr task ps: agentrun ps --format json" {
	start_sleeper
	log_run cr task ps "$ID"
	assert_success
	assert_called "ps --format json $ID\$"
	grep -qE "^${PID}[[:space:]]" <<<"$output" || fail "the task's pid $PID is not listed: $output"
}

@test "ctr task kill -a: agentrun kill --all" {
	start_sleeper
	log_run cr task kill -a -s KILL "$ID"
	assert_success
	assert_called "kill --all $ID 9\$"
	local n=50
	while ((n-- > 0)) && ! cr task ls | grep -qE "^${ID}[[:space:]].*STOPPED"; do sleep 0.1; done
	cr task ls | grep -qE "^${ID}[[:space:]].*STOPPED" || fail "task $ID did not stop: $(cr task ls)"
	log_run cr task rm "$ID"
	assert_success
	assert_called "delete $ID\$"
	[[ ! -e $CTR_RUNC_ROOT/default/$ID ]] || fail "agentrun's state for $ID is left"
}

@test "ctr run of a missing executable shows agentrun's error" {
	log_run ! cr_run --rm "$(uniq_name ctr)" /nonexistent
	assert_output_contains /nonexistent
	grep -qiE 'no such file or directory|executable file not found' <<<"$output" ||
		fail "no 'not found' text in ctr's output: $output"
}

@test "containerd takes contrib/containerd/config.toml: the agentrun runtime handler" {
	log_run containerd --config "$CTR_DIR/config-cri.toml" config dump
	assert_success
	local section
	section=$(awk '/^ *\[plugins\."io\.containerd\.grpc\.v1\.cri"\.containerd\.runtimes\.agentrun\]/ {on = 1}
		on && /^ *\[/ && !/runtimes\.agentrun/ {on = 0} on' <<<"$output")
	[[ -n $section ]] || fail "containerd's config has no runtimes.agentrun: $output"
	grep -qF 'runtime_type = "io.containerd.runc.v2"' <<<"$section" || fail "runtime_type: $section"
	grep -qF "BinaryName = \"$ENG_DIR/bin/agentrun\"" <<<"$section" || fail "BinaryName: $section"
}
