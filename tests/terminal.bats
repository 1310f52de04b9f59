#!/usr/bin/env bats
# process.terminal: a pty whose master goes over --console-socket
# (received by tests/recvtty), /dev/console, consoleSize.

load helpers

setup() {
	ar_setup
	SOCK=$BATS_TEST_TMPDIR/console.sock
	TTYOUT=$BATS_TEST_TMPDIR/tty.out
	update_config '.process.terminal = true'
}

# run_tty_detached SCRIPT: run -d SCRIPT on a terminal; wait until it exits
# and recvtty has copied everything out.
run_tty_detached() {
	set_cmd "$1"
	start_recvtty "$SOCK" "$TTYOUT"
	ar_ok run -d --console-socket "$SOCK" "$CID"
	wait_for_state "$CID" stopped
	local tries=50
	while [[ -e /proc/$(cat "$BATS_TEST_TMPDIR/recvtty.pid" 2>/dev/null || echo 0) ]] && ((tries-- > 0)); do
		sleep 0.1
	done
	# the terminal turns \n into \r\n
	output=$(tr -d '\r' <"$TTYOUT")
	mapfile -t lines <<<"$output"
	echo "tty output: $output" >&2
}

@test "terminal: tty inside is a /dev/pts device" {
	run_tty_detached 'tty'
	[[ ${lines[0]} =~ ^/dev/pts/[0-9]+$ ]] || fail "tty: $output"
}

@test "terminal: stdin, stdout and stderr are the terminal" {
	run_tty_detached 'for f in 0 1 2; do readlink /proc/self/fd/$f; done'
	local i
	for i in 0 1 2; do
		[[ ${lines[i]} =~ ^/dev/pts/[0-9]+$ ]] || fail "fd $i: ${lines[i]}"
	done
}

@test "terminal: /dev/console is the terminal" {
	run_tty_detached 'stat -c "%F %t" /dev/console; stat -c "%t:%T" $(tty) /dev/console'
	[[ ${lines[0]} == "character special file 88" ]] || fail "console: ${lines[0]}"
	# same device as the tty (136 = 0x88 is the pts major)
	[[ ${lines[1]} == "${lines[2]}" ]] || fail "console ${lines[2]} is not the tty ${lines[1]}"
}

@test "terminal: consoleSize" {
	update_config '.process.consoleSize = {height: 41, width: 123}'
	run_tty_detached 'stty size'
	[[ ${lines[0]} == "41 123" ]] || fail "size: $output"
}

@test "terminal: the tty belongs to the process user, group tty" {
	update_config '.process.user = {uid: 1000, gid: 1000}'
	run_tty_detached 'stat -c %u:%g $(tty)'
	[[ ${lines[0]} == 1000:5 ]] || fail "owner: $output"
}

@test "terminal: create with --console-socket returns without holding the caller's stdio" {
	update_config '.process.args = ["sh", "-c", "echo hello-tty; sleep 100"]'
	start_recvtty "$SOCK" "$TTYOUT"
	# plain `run` (a pipe): a runtime or monitor that keeps the pipe open hangs here
	AR_TIMEOUT=20 ar create --console-socket "$SOCK" "$CID"
	assert_status 0
	[[ $(state_field "$CID" status) == created ]]
	ar_ok start "$CID"
	wait_for_state "$CID" running
	wait_for_file "$TTYOUT"
	grep -q hello-tty "$TTYOUT"
}

@test "terminal: run -d with a terminal needs --console-socket" {
	update_config '.process.args = ["true"]'
	ar_detached run -d "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "terminal: --console-socket without a terminal is an error" {
	update_config '.process.terminal = false'
	start_recvtty "$SOCK" "$TTYOUT"
	ar_detached run -d --console-socket "$SOCK" "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "terminal: a console socket nobody listens on is an error" {
	ar_detached run -d --console-socket "$BATS_TEST_TMPDIR/nobody.sock" "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "terminal: foreground run with a terminal proxies it" {
	requires_cmd script
	set_cmd 'tty; echo done-tty'
	# the runtime needs a terminal of its own to proxy: script(1) gives it one
	run timeout 30 script -qec "$(printf '%q ' "$RUNTIME" --root "$AR_ROOT" run "$CID")" /dev/null </dev/null
	echo "$output" >&2
	assert_status 0
	[[ $output =~ /dev/pts/[0-9]+ ]] || fail "output: $output"
	assert_output_contains done-tty
}
