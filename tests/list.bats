#!/usr/bin/env bats
# list: table, json, -q.

load helpers

# two containers: $CID created, $C2 running
make_two() {
	update_config '.process.args = ["sleep", "100"]'
	create_ok "$CID"
	C2=$(new_id)
	run_detached_ok "$C2"
	wait_for_state "$C2" running
}

@test "list: empty" {
	ar_ok list
	read -r -a head <<<"${lines[0]}"
	assert_eq "${head[*]}" "ID PID STATUS BUNDLE CREATED OWNER" header
	assert_eq "${#lines[@]}" 1 "lines"
	ar_ok list -q
	assert_eq "$output" "" "list -q"
	ar_ok list --format json
	# runc prints null for no containers; [] is the better answer
	[[ $output == null || $(jq -c . <<<"$output") == "[]" ]] || fail "json: $output"
}

@test "list: table" {
	make_two
	ar_ok list
	read -r -a head <<<"${lines[0]}"
	assert_eq "${head[*]}" "ID PID STATUS BUNDLE CREATED OWNER" header
	assert_eq "${#lines[@]}" 3 "lines"
	local line f found=0
	for line in "${lines[@]:1}"; do
		read -r -a f <<<"$line"
		if [[ ${f[0]} == "$CID" ]]; then
			assert_eq "${f[2]}" created "$CID status"
			found=$((found + 1))
		elif [[ ${f[0]} == "$C2" ]]; then
			assert_eq "${f[1]}" "$(init_pid "$C2")" "$C2 pid"
			assert_eq "${f[2]}" running "$C2 status"
			found=$((found + 1))
		fi
		assert_eq "${f[3]}" "$BUNDLE" bundle
		[[ ${f[4]} =~ ^[0-9]{4}-[0-9]{2}-[0-9]{2}T ]] || fail "created: ${f[4]}"
		assert_eq "${f[5]}" root owner
	done
	assert_eq "$found" 2 "containers listed"
}

@test "list: -q prints the IDs only" {
	make_two
	ar_ok list -q
	assert_eq "$(sort <<<"$output" | tr '\n' ' ')" "$(printf '%s\n' "$CID" "$C2" | sort | tr '\n' ' ')" "ids"
}

@test "list: --format json" {
	make_two
	ar_ok list --format json
	jq -e 'type == "array" and length == 2' <<<"$output" >/dev/null || fail "json: $output"
	assert_eq "$(jq -r --arg id "$CID" '.[] | select(.id == $id) | .status' <<<"$output")" created
	assert_eq "$(jq -r --arg id "$C2" '.[] | select(.id == $id) | .status' <<<"$output")" running
	assert_eq "$(jq -r --arg id "$C2" '.[] | select(.id == $id) | .pid' <<<"$output")" "$(init_pid "$C2")"
	assert_eq "$(jq -r --arg id "$C2" '.[] | select(.id == $id) | .bundle' <<<"$output")" "$BUNDLE"
	local f
	for f in ociVersion id pid status bundle rootfs created owner; do
		jq -e "all(has(\"$f\"))" <<<"$output" >/dev/null || fail "json lacks $f: $output"
	done
}

@test "list: a stopped container is listed as stopped" {
	update_config '.process.args = ["true"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" stopped
	ar_ok list --format json
	assert_eq "$(jq -r '.[0].status' <<<"$output")" stopped
}

@test "list: a deleted container is gone" {
	make_two
	ar_ok delete --force "$C2"
	ar_ok list -q
	assert_eq "$output" "$CID"
}

@test "list: a bad --format is an error" {
	ar list --format yaml
	[[ $status -ne 0 ]]
}

@test "list: a missing --root lists nothing" {
	run "$RUNTIME" --root "$BATS_TEST_TMPDIR/no-such-root" list -q
	assert_status 0
	assert_eq "$output" ""
}
