# shellcheck shell=bash
# Helpers for tests/monitor.bats: the per-container monitor and its audit log.
#
# Every test runs under a host policy of its own (the compiled-in hardening, so the agent
# seccomp filter and the exec audit are on) whose audit dir is inside the test's temp dir:
# nothing is written to /var/log/agentrun.  tests/monitor-helper.c is built once per file,
# statically, and copied into each bundle as /bin/mh.

load helpers

MON_HELPER_SRC=$TESTS_DIR/monitor-helper.c

# mon_build_helper: setup_file builds the static helper into the file's temp dir.
mon_build_helper() {
	command -v gcc >/dev/null || return 0
	gcc -static -O2 -Wall -Wextra -Werror -o "$BATS_FILE_TMPDIR/monitor-helper" "$MON_HELPER_SRC"
}

# mon_setup: ar_setup without the suite's passthrough policy, then ours.
mon_setup() {
	is_agentrun || skip "the monitor and its audit log are agentrun's own"
	AR_SUITE_POLICY=none ar_setup
	AUDIT_DIR=$BATS_TEST_TMPDIR/audit
	mkdir -p "$AUDIT_DIR"
	mon_policy '{}'
	[[ -x $BATS_FILE_TMPDIR/monitor-helper ]] || skip "tests/monitor-helper.c could not be built (gcc -static)"
	cp "$BATS_FILE_TMPDIR/monitor-helper" "$ROOTFS/bin/mh"
	echo box >"$ROOTFS/etc/hostname"
}

# mon_policy JSON: the host policy, JSON merged over {"audit": {"dir": <test dir>}}.
#   mon_policy '{"audit": {"max_bytes": "1m"}}'
mon_policy() {
	jq -n --arg d "$AUDIT_DIR" --argjson extra "$1" \
		'{audit: {enabled: true, dir: $d}} * $extra' >"$BATS_TEST_TMPDIR/policy.json" ||
		fail "bad policy $1"
	export AGENTRUN_POLICY=$BATS_TEST_TMPDIR/policy.json
}

# audit_log ID: the path of ID's audit log.
audit_log() {
	echo "$AUDIT_DIR/$1.jsonl"
}

# events ID EVENT: the lines of one event, compact, one per line.
events() {
	jq -c --arg e "$2" 'select(.event == $e)' <"$(audit_log "$1")"
}

# count_events ID EVENT
count_events() {
	events "$1" "$2" | wc -l
}

# exec_with_argv ID JSON-ARRAY: the exec line(s) whose argv is exactly that array.
exec_with_argv() {
	jq -c --argjson a "$2" 'select(.event == "exec" and .argv == $a)' <"$(audit_log "$1")"
}

# assert_exec ID JSON-ARRAY: exactly one exec line has that argv; it is left in $line.
assert_exec() {
	line=$(exec_with_argv "$1" "$2")
	[[ -n $line ]] || fail "no exec of $2 in $(audit_log "$1"): $(grep -c . "$(audit_log "$1")") lines"
	[[ $(wc -l <<<"$line") -eq 1 ]] || fail "more than one exec of $2: $line"
}

# field JSON-LINE KEY: one field of a line, raw.
field() {
	jq -r ".$2" <<<"$1"
}

# assert_log_valid ID: every line is a JSON object with ts (RFC 3339, microseconds, UTC),
# event and id.
assert_log_valid() {
	local log bad
	log=$(audit_log "$1")
	[[ -s $log ]] || fail "no audit log $log"
	jq -c . <"$log" >/dev/null || fail "$log is not valid JSON lines"
	bad=$(jq -c --arg id "$1" 'select((.ts | type) != "string"
		or (.ts | test("^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{6}Z$") | not)
		or (.event | type) != "string" or .id != $id)' <"$log" | head -3)
	[[ -z $bad ]] || fail "lines without ts/event/id: $bad"
}

# monitor_pid ID: from the state dir (the state JSON of `state` is runc's, without it).
monitor_pid() {
	jq -r '.monitorPid // empty' "$AR_ROOT/$1/state.json"
}

# wait_for_event ID EVENT [SECONDS]
wait_for_event() {
	local tries=$((${3:-10} * 10))
	while ((tries-- > 0)); do
		[[ $(count_events "$1" "$2" 2>/dev/null) -ge 1 ]] && return 0
		sleep 0.1
	done
	fail "no $2 event in $(audit_log "$1")"
}

# now_ms: a monotonic-enough wall clock in milliseconds, for bounds.
now_ms() {
	echo $(($(date +%s%N) / 1000000))
}
