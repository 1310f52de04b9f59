#!/usr/bin/env bats
# --pid-file: written (atomically) with the init's host pid.

load helpers

@test "pidfile: create --pid-file matches the state's pid" {
	update_config '.process.args = ["sleep", "100"]'
	create_ok --pid-file "$BATS_TEST_TMPDIR/pid" "$CID"
	[[ -s $BATS_TEST_TMPDIR/pid ]]
	local pid
	pid=$(cat "$BATS_TEST_TMPDIR/pid")
	[[ $pid =~ ^[0-9]+$ ]] || fail "pid file holds '$pid'"
	assert_eq "$pid" "$(init_pid "$CID")" "pid file"
	[[ -d /proc/$pid ]]
}

@test "pidfile: run -d --pid-file" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached_ok --pid-file "$BATS_TEST_TMPDIR/pid" "$CID"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/pid")" "$(init_pid "$CID")" "pid file"
}

@test "pidfile: a relative path is relative to the caller's cwd" {
	update_config '.process.args = ["sleep", "100"]'
	mkdir -p "$HOSTDIR/cwd"
	cd "$HOSTDIR/cwd"
	create_ok -b "$BUNDLE" --pid-file rel.pid "$CID"
	assert_eq "$(cat "$HOSTDIR/cwd/rel.pid")" "$(init_pid "$CID")" "pid file"
}

@test "pidfile: no temporary file is left next to it" {
	update_config '.process.args = ["sleep", "100"]'
	mkdir -p "$HOSTDIR/piddir"
	create_ok --pid-file "$HOSTDIR/piddir/pid" "$CID"
	assert_eq "$(ls -A "$HOSTDIR/piddir")" pid "files in the pid file's dir"
}

@test "pidfile: an existing pid file is replaced" {
	update_config '.process.args = ["sleep", "100"]'
	echo 999999999 >"$BATS_TEST_TMPDIR/pid"
	create_ok --pid-file "$BATS_TEST_TMPDIR/pid" "$CID"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/pid")" "$(init_pid "$CID")" "pid file"
}

@test "pidfile: a pid file in a missing directory fails create and leaves nothing" {
	update_config '.process.args = ["sleep", "100"]'
	ar_detached create --pid-file "$HOSTDIR/no/such/dir/pid" "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}
