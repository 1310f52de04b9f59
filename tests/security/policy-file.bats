#!/usr/bin/env bats
# The host policy file: `agentrun policy show` prints the one in force; a bad file is a hard
# error that names the key, before anything is made.

load helpers-security

# bad_policy TEXT WANT...: with TEXT as the host policy, create and `policy show` fail, the error
# names every WANT, and nothing is left behind.
bad_policy() {
	local text=$1
	shift
	printf '%s' "$text" >"$POLICY"
	write_config default
	ar_bg create "$CID"
	[[ $status -ne 0 ]] || fail "create succeeded under the policy $text"
	local w
	for w in "$@"; do
		assert_output_contains "$w"
	done
	assert_no_leftovers "$CID"
	[[ -z $(ls -A "$AR_ROOT") ]] || fail "the state root is not empty: $(ls -A "$AR_ROOT")"
	[[ -z $(ls -A "$AUDIT_DIR") ]] || fail "audit files were written: $(ls -A "$AUDIT_DIR")"
	ar policy show
	[[ $status -ne 0 ]] || fail "policy show accepted $text"
	for w in "$@"; do
		assert_output_contains "$w"
	done
}

@test "bad policy: an unknown top-level key is named" {
	bad_policy '{"bogus": 1}' "bogus" "unknown key"
}

@test "bad policy: an unknown key in a section is named with its path" {
	bad_policy '{"controls": {"netwrk": false}}' "controls.netwrk" "unknown key"
	bad_policy '{"maxima": {"shm_size": "1g"}}' "maxima.shm_size" "unknown key"
	bad_policy '{"audit": {"dir": "/tmp", "extra": 1}}' "audit.extra" "unknown key"
}

@test "bad policy: a value of the wrong type is named" {
	bad_policy '{"controls": {"network": "no"}}' "controls.network" "boolean"
	bad_policy '{"allow": []}' "allow" "object"
	bad_policy '{"defaults": {"memory": true}}' "defaults.memory"
	bad_policy '{"defaults": {"cpus": "2"}}' "defaults.cpus"
	bad_policy '{"audit": {"dir": 5}}' "audit.dir" "string"
	bad_policy '{"devices": "/dev/kmsg"}' "devices"
	bad_policy '{"comment": 5}' "comment" "string"
}

@test "bad policy: a bad value is named" {
	bad_policy '{"defaults": {"memory": "12q"}}' "defaults.memory"
	bad_policy '{"defaults": {"timeout": "abc"}}' "defaults.timeout"
	bad_policy '{"defaults": {"pids": -1}}' "defaults.pids"
	bad_policy '{"audit": {"dir": "relative/dir"}}' "audit.dir" "absolute"
	bad_policy '{"devices": ["/etc/shadow"]}' "devices" "/etc/shadow"
}

@test "bad policy: a duplicate key or a null is an error, never a guess" {
	bad_policy '{"controls": {"network": false, "network": true}}' "controls.network" "duplicate"
	bad_policy '{"controls": {"seccomp": null}}' "controls.seccomp" "null"
}

@test "bad policy: malformed JSON, an empty file and a non-object are errors" {
	bad_policy '{"controls": {"network": true' "$POLICY" "JSON"
	bad_policy '' "$POLICY" "JSON"
	bad_policy '["controls"]' "$POLICY" "object"
}

@test "bad policy: a named file that does not exist is an error (--policy and AGENTRUN_POLICY)" {
	write_config default
	POLICY=$TMP/missing.json
	ar_bg create "$CID"
	[[ $status -ne 0 ]] || fail "create succeeded without its policy file"
	assert_output_contains "missing.json"
	assert_no_leftovers "$CID"
	run env AGENTRUN_POLICY="$TMP/missing.json" "$RUNTIME" --root "$AR_ROOT" policy show
	[[ $status -ne 0 ]] || fail "policy show succeeded without its policy file"
	assert_output_contains "missing.json"
}

# ---- policy show ----------------------------------------------------------------------------

@test "policy show: contrib/policy/default.json is the compiled-in policy" {
	local compiled
	if [[ -e /etc/agentrun/policy.json ]]; then
		skip "/etc/agentrun/policy.json exists: the compiled-in defaults are not in force"
	fi
	compiled=$(env -u AGENTRUN_POLICY "$RUNTIME" policy show) || fail "policy show failed"
	assert_eq "$(jq -r .source <<<"$compiled")" "compiled-in defaults" "source"
	run "$RUNTIME" --policy "$TOP_DIR/contrib/policy/default.json" policy show
	assert_status 0
	assert_eq "$(jq -S 'del(.source)' <<<"$output")" "$(jq -S 'del(.source)' <<<"$compiled")" \
		"default.json against the compiled-in defaults"
	jq -e '.controls | to_entries | all(.value == true)' <<<"$compiled" >/dev/null ||
		fail "a control is off by default: $compiled"
	jq -e '.allow | to_entries | all(.value == false)' <<<"$compiled" >/dev/null ||
		fail "a relaxation is allowed by default: $compiled"
	jq -e '.defaults == {timeout_s: 3600, memory: 2147483648, pids: 512, cpus: 2,
		tmp_size: 268435456, shm_size: 67108864} and .audit.enabled == true' <<<"$compiled" \
		>/dev/null || fail "unexpected defaults: $compiled"
}

@test "policy show: a file's values, through --policy and AGENTRUN_POLICY" {
	write_policy '{"controls": {"seccomp": false}, "allow": {"network_inherit": true},
		"defaults": {"memory": "512m", "pids": 100, "timeout": "10m", "cpus": 0.5},
		"maxima": {"memory": "1g", "pids": 200}, "devices": ["/dev/kmsg"],
		"audit": {"max_bytes": "1m"}}'
	ar policy show
	assert_status 0
	jq -e --arg p "$POLICY" --arg a "$AUDIT_DIR" '
		.source == $p and .controls.seccomp == false and .controls.network == true
		and .allow.network_inherit == true and .allow.seccomp_off == false
		and .defaults.memory == 536870912 and .defaults.pids == 100 and .defaults.timeout_s == 600
		and .defaults.cpus == 0.5 and .maxima.memory == 1073741824 and .maxima.pids == 200
		and .devices == ["/dev/kmsg"] and .audit.dir == $a and .audit.max_bytes == 1048576' \
		<<<"$output" >/dev/null || fail "policy show does not match the file: $output"
	run env AGENTRUN_POLICY="$POLICY" "$RUNTIME" policy show
	assert_status 0
	assert_eq "$(jq -r .source <<<"$output")" "$POLICY" "source through AGENTRUN_POLICY"
}

@test "policy show: passthrough turns every control off and keeps the audit" {
	run "$RUNTIME" --policy "$TOP_DIR/contrib/policy/passthrough.json" policy show
	assert_status 0
	jq -e '(.controls | to_entries | all(.value == false)) and .audit.enabled == true' \
		<<<"$output" >/dev/null || fail "passthrough.json leaves a control on: $output"
}

@test "a host policy's defaults reach the container: memory, pids, cpus, timeout, tmp size" {
	write_policy '{"defaults": {"memory": "300m", "pids": 77, "cpus": 0.5, "timeout": "5m",
		"tmp_size": "16m"}}'
	write_config weak
	set_args sh -c 'df -k /tmp | tail -1'
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.memory.limit)" 314572800
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.pids.limit)" 77
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.cpu.quota)" 50000
	assert_eq "$(inspect "$CID" .policy.timeout_s)" 300
	_ar delete --force "$CID"
	ar run "$CID"
	assert_status 0
	assert_output_contains " 16384 "
}

@test "a host policy's maxima cut a config's larger limits" {
	write_policy '{"maxima": {"memory": "1g", "pids": 100, "cpus": 1}}'
	write_config default
	update_config '.linux.resources = {memory: {limit: 17179869184}, pids: {limit: 100000},
		cpu: {quota: 400000, period: 100000}}'
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.memory.limit)" 1073741824
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.pids.limit)" 100
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.cpu.quota)" 100000
}

@test "a maximum with no default: a config without a limit gets the maximum, not none" {
	write_policy '{"defaults": {"memory": 0, "pids": 0, "timeout": 0}, "maxima": {"memory": "1g", "pids": 300, "timeout": "2h"}}'
	write_config weak
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.memory.limit)" 1073741824
	assert_eq "$(inspect "$CID" .effective_spec.linux.resources.pids.limit)" 300
	assert_eq "$(inspect "$CID" .policy.timeout_s)" 7200
}

@test "no default and no maximum: no limit, and inspect says why" {
	write_policy '{"defaults": {"pids": 0}}'
	write_config weak
	ar_bg_ok create "$CID"
	assert_eq "$(inspect "$CID" '.effective_spec.linux.resources.pids.limit // "none"')" '"none"'
	run inspect "$CID" '[.policy.controls[] | select(.control == "pids") | .why]'
	assert_output_contains "no limit"
}
