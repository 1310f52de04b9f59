#!/usr/bin/env bats
# Bad input: the runtime says what is wrong, and leaves nothing behind.

load helpers

# create_fails [ARGS...]: create $CID must fail and leave nothing
create_fails() {
	ar_detached create "$@" "$CID"
	[[ $status -ne 0 ]] || fail "create succeeded"
	local out=$output st=$status
	ar state "$CID"
	[[ $status -ne 0 ]] || fail "state of a failed create exists"
	assert_no_leftovers "$CID"
	# what the create said, for the caller's checks
	output=$out status=$st
}

@test "badinput: malformed JSON" {
	echo '{"ociVersion": "1.0.2", "process": {' >"$BUNDLE/config.json"
	create_fails
}

@test "badinput: config.json is not an object" {
	echo '[]' >"$BUNDLE/config.json"
	create_fails
}

@test "badinput: empty config.json" {
	: >"$BUNDLE/config.json"
	create_fails
}

@test "badinput: a wrong type names the JSON path" {
	update_config '.process.args = "sh"'
	create_fails
	assert_output_contains process.args
}

@test "badinput: the error has the form 'config.json: PATH: expected TYPE'" {
	agentrun_only "the message format is agentrun's"
	update_config '.process.args = "sh"'
	create_fails
	assert_output_contains "config.json: process.args: expected array of strings"
}

@test "badinput: wrong types deep in the document name their path" {
	update_config '.linux.resources.memory.limit = "big"'
	create_fails
	assert_output_contains linux.resources.memory.limit

	update_config '.linux.resources.memory.limit = 1000000 | .linux.namespaces[0].type = 5'
	CID=$(new_id) create_fails
	assert_output_contains linux.namespaces
}

@test "badinput: missing process" {
	update_config 'del(.process)'
	create_fails
	assert_output_contains process
}

@test "badinput: missing root" {
	update_config 'del(.root)'
	create_fails
	assert_output_contains root
}

@test "badinput: missing ociVersion" {
	agentrun_only "runc 1.1.5 accepts a config without ociVersion"
	update_config 'del(.ociVersion)'
	create_fails
	assert_output_contains ociVersion
}

@test "badinput: empty process.args" {
	update_config '.process.args = []'
	create_fails
	assert_output_contains args
}

@test "badinput: relative process.cwd" {
	update_config '.process.cwd = "relative"'
	create_fails
	assert_output_contains_i cwd
}

@test "badinput: unknown fields are ignored" {
	update_config '.futureField = 1 | .process.futureField = {a: [1, 2]} | .linux.futureField = "x" | .mounts[0].futureField = true'
	set_cmd 'echo still-fine'
	ar_ok run "$CID"
	assert_output_contains still-fine
}

@test "badinput: an unknown ID does not exist, for every verb" {
	local verb
	for verb in state start "kill" delete; do
		ar "$verb" nosuchcontainer
		[[ $status -ne 0 ]] || fail "$verb of an unknown ID succeeded"
		assert_output_contains "does not exist"
	done
}

@test "badinput: the unknown-ID message is 'container \"ID\" does not exist'" {
	agentrun_only "runc 1.1.5 says 'container does not exist' without the ID"
	local verb
	for verb in state start "kill" delete; do
		ar "$verb" nosuchcontainer
		[[ $status -ne 0 ]]
		assert_output_contains 'container "nosuchcontainer" does not exist'
	done
}

@test "badinput: delete --force of an unknown ID succeeds" {
	ar delete --force nosuchcontainer
	assert_status 0
}

@test "badinput: a duplicate ID fails and leaves the first container intact" {
	update_config '.process.args = ["sleep", "100"]'
	create_ok "$CID"
	local pid
	pid=$(init_pid "$CID")
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_output_contains "exists"
	# the first one is untouched and still works
	assert_eq "$(state_field "$CID" status)" created
	assert_eq "$(init_pid "$CID")" "$pid" "pid"
	[[ -d $(container_cgroup "$CID" pids) ]]
	ar_ok start "$CID"
	wait_for_state "$CID" running
}

# bad_id ID: create with ID fails and nothing named after it is left
bad_id() {
	local id=$1
	track_id "$id"
	ar_detached create -- "$id"
	[[ $status -ne 0 ]] || fail "ID '$id' was accepted"
	assert_no_leftovers "$id"
	# nothing was made next to the state root either
	assert_eq "$(ls -A "$BATS_TEST_TMPDIR" | grep -vxE 'bundle|state|out|host|audit|policy\.json|stdio-.*|\.ids|\.cleanup' || true)" "" "new files"
}

@test "badinput: bad IDs: slash, dot-dot, dot, space, empty, too long" {
	update_config '.process.args = ["sleep", "100"]'
	bad_id "a/b$RANDOM"
	bad_id "../x$RANDOM"
	bad_id ".."
	bad_id "."
	bad_id "a b$RANDOM"
	bad_id ""
	bad_id "$(printf 'x%.0s' {1..1025})"
}

@test "badinput: bad IDs that runc accepts: leading -, . or _" {
	agentrun_only "runc 1.1.5 accepts IDs matching ^[\\w+-.]+\$"
	update_config '.process.args = ["sleep", "100"]'
	bad_id "-x$RANDOM"
	bad_id ".hidden$RANDOM"
	bad_id "_x$RANDOM"
	bad_id "a:b$RANDOM"
}

@test "badinput: a long valid ID works" {
	local id
	id="L$(printf 'y%.0s' {1..200})"
	track_id "$id"
	ar_ok run "$id"
	assert_no_leftovers "$id"
}

@test "badinput: IDs with _ . + - inside are valid" {
	local id="ok_1.2+3-4$RANDOM"
	track_id "$id"
	ar_ok run "$id"
	assert_no_leftovers "$id"
}

@test "badinput: missing bundle" {
	create_fails -b "$BATS_TEST_TMPDIR/no-such-bundle"
}

@test "badinput: bundle without config.json" {
	rm "$BUNDLE/config.json"
	create_fails
}

@test "badinput: missing rootfs" {
	rm -rf "$ROOTFS"
	create_fails
}

@test "badinput: rootfs is a file" {
	rm -rf "$ROOTFS"
	echo not-a-dir >"$ROOTFS"
	create_fails
}

@test "badinput: the program does not exist in the rootfs" {
	update_config '.process.args = ["/bin/no-such-program"]'
	ar_detached run -d "$CID"
	[[ $status -ne 0 ]] || wait_for_state "$CID" stopped
	ar delete --force "$CID"
	assert_no_leftovers "$CID"
}

@test "badinput: a missing ID argument is an error" {
	ar create
	[[ $status -ne 0 ]]
	ar start
	[[ $status -ne 0 ]]
}

@test "badinput: an unknown command is an error" {
	ar frobnicate "$CID"
	[[ $status -ne 0 ]]
}

@test "badinput: an unknown flag is an error" {
	ar create --no-such-flag "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "badinput: an unknown signal is an error" {
	update_config '.process.args = ["sleep", "100"]'
	run_detached_ok "$CID"
	ar kill "$CID" SIGBOGUS
	[[ $status -ne 0 ]]
	ar kill "$CID" 999
	[[ $status -ne 0 ]]
	assert_eq "$(state_field "$CID" status)" running
}

@test "badinput: a failed start leaves delete able to clean up" {
	update_config '.process.args = ["/bin/no-such-program"]'
	ar_detached create "$CID"
	if [[ $status -eq 0 ]]; then
		ar start "$CID"
	fi
	ar delete --force "$CID"
	assert_no_leftovers "$CID"
}
