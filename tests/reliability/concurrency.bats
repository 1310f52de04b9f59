#!/usr/bin/env bats
# Concurrency: many creates at once, two creates of one ID, and delete racing kill racing state.

load helpers-reliability

setup_file() {
	rel_setup_file
}

setup() {
	rel_setup
	update_config '.process.args = ["sleep", "1000"]'
}

teardown() {
	rel_teardown
}

# bg_ar OUT-FILE ARGS...: the runtime in the background, its output and status in OUT-FILE
# (status on the last line), stdio never inherited by the container from a pipe.
bg_ar() {
	local out=$1
	shift
	{
		timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" "$@" </dev/null >"$out" 2>&1
		echo "status=$?" >>"$out"
	} &
}

@test "50 parallel creates of distinct IDs all succeed, and all are deleted" {
	local i ids=() failed=0 n
	for ((i = 0; i < 50; i++)); do
		ids+=("$(new_id p)")
	done
	for ((i = 0; i < 50; i++)); do
		bg_ar "$BATS_TEST_TMPDIR/create-$i" create "${ids[i]}"
	done
	wait
	for ((i = 0; i < 50; i++)); do
		if ! grep -qx 'status=0' "$BATS_TEST_TMPDIR/create-$i"; then
			echo "create ${ids[i]}: $(cat "$BATS_TEST_TMPDIR/create-$i")" >&2
			failed=$((failed + 1))
		fi
	done
	((failed == 0)) || fail "$failed of 50 parallel creates failed"
	n=$(ar_raw list --format json | jq '[(. // [])[] | select(.status == "created")] | length')
	assert_eq "$n" 50 "containers listed as created"
	for ((i = 0; i < 50; i++)); do
		bg_ar "$BATS_TEST_TMPDIR/delete-$i" delete "${ids[i]}"
	done
	wait
	for ((i = 0; i < 50; i++)); do
		grep -qx 'status=0' "$BATS_TEST_TMPDIR/delete-$i" ||
			fail "delete ${ids[i]}: $(cat "$BATS_TEST_TMPDIR/delete-$i")"
	done
	for ((i = 0; i < 50; i++)); do
		wait_gone "${ids[i]}"
	done
	[[ -z $(ls -A "$AR_ROOT") ]] || fail "state root not empty: $(ls -A "$AR_ROOT")"
}

@test "two parallel creates of one ID: exactly one succeeds, the other says the ID exists (20 rounds)" {
	local round id a b ok
	for ((round = 0; round < 20; round++)); do
		id=$(new_id s)
		bg_ar "$BATS_TEST_TMPDIR/a" create "$id"
		bg_ar "$BATS_TEST_TMPDIR/b" create "$id"
		wait
		a=$(tail -1 "$BATS_TEST_TMPDIR/a")
		b=$(tail -1 "$BATS_TEST_TMPDIR/b")
		ok=0
		[[ $a == status=0 ]] && ok=$((ok + 1))
		[[ $b == status=0 ]] && ok=$((ok + 1))
		((ok == 1)) || fail "round $round: $ok creates succeeded: a: $(cat "$BATS_TEST_TMPDIR/a") b: $(cat "$BATS_TEST_TMPDIR/b")"
		if [[ $a == status=0 ]]; then
			grep -q "already exists" "$BATS_TEST_TMPDIR/b" || fail "the loser said: $(cat "$BATS_TEST_TMPDIR/b")"
		else
			grep -q "already exists" "$BATS_TEST_TMPDIR/a" || fail "the loser said: $(cat "$BATS_TEST_TMPDIR/a")"
		fi
		# the winner is whole: created, with its init alive
		[[ $(status_of "$id") == created ]] || fail "round $round: the winner is $(status_of "$id")"
		ar_raw delete "$id" || fail "delete $id"
		wait_gone "$id"
	done
}

# A status that says the runtime crashed rather than refused: a signal, or a sanitizer's.
crashed() {
	local st=$1
	[[ $st =~ ^[0-9]+$ ]] || fail "no exit status in $2: $(cat -A "$2")"
	((st >= 124)) || grep -qE 'AddressSanitizer|runtime error|Segmentation|core dumped' "$2"
}

@test "delete racing kill racing state on one ID, 50 rounds: no crash, no corrupt state, nothing left" {
	local round id f st netns pid
	for ((round = 0; round < 50; round++)); do
		id=$(new_id r)
		ar run -d "$id"
		assert_status 0
		pid=$(jq -r .pid "$AR_ROOT/$id/state.json")
		netns=$(netns_of "$pid")
		bg_ar "$BATS_TEST_TMPDIR/state1" state "$id"
		bg_ar "$BATS_TEST_TMPDIR/kill" kill "$id" KILL
		bg_ar "$BATS_TEST_TMPDIR/delete" delete --force "$id"
		bg_ar "$BATS_TEST_TMPDIR/state2" state "$id"
		bg_ar "$BATS_TEST_TMPDIR/list" list --format json
		wait
		for f in state1 kill delete state2 list; do
			st=$(tail -1 "$BATS_TEST_TMPDIR/$f")
			st=${st#status=}
			! crashed "$st" "$BATS_TEST_TMPDIR/$f" ||
				fail "round $round: $f crashed (status $st): $(cat "$BATS_TEST_TMPDIR/$f")"
		done
		grep -qx status=0 "$BATS_TEST_TMPDIR/delete" ||
			fail "round $round: delete --force failed: $(cat "$BATS_TEST_TMPDIR/delete")"
		for f in state1 state2; do
			# either a whole state document, or "does not exist": never half a file
			if grep -qx status=0 "$BATS_TEST_TMPDIR/$f"; then
				sed '$d' "$BATS_TEST_TMPDIR/$f" | jq -e '.id and .status' >/dev/null ||
					fail "round $round: $f printed a broken state: $(cat "$BATS_TEST_TMPDIR/$f")"
			else
				grep -q "does not exist" "$BATS_TEST_TMPDIR/$f" ||
					fail "round $round: $f failed oddly: $(cat "$BATS_TEST_TMPDIR/$f")"
			fi
		done
		if grep -qx status=0 "$BATS_TEST_TMPDIR/list"; then
			sed '$d' "$BATS_TEST_TMPDIR/list" | jq -e 'type == "array" or . == null' >/dev/null ||
				fail "round $round: list printed broken JSON: $(cat "$BATS_TEST_TMPDIR/list")"
		fi
		wait_gone "$id" "$netns"
	done
}

@test "state and list while 20 containers are created and deleted: every answer is whole" {
	local i ids=() bad=0 f
	for ((i = 0; i < 20; i++)); do
		ids+=("$(new_id l)")
		bg_ar "$BATS_TEST_TMPDIR/c-$i" run -d "${ids[i]}"
	done
	for ((i = 0; i < 20; i++)); do
		bg_ar "$BATS_TEST_TMPDIR/l-$i" list --format json
	done
	wait
	for ((i = 0; i < 20; i++)); do
		bg_ar "$BATS_TEST_TMPDIR/d-$i" delete --force "${ids[i]}"
		bg_ar "$BATS_TEST_TMPDIR/s-$i" state "${ids[i]}"
	done
	for ((i = 0; i < 20; i++)); do
		bg_ar "$BATS_TEST_TMPDIR/L-$i" list --format json
	done
	wait
	for f in "$BATS_TEST_TMPDIR"/l-* "$BATS_TEST_TMPDIR"/L-*; do
		grep -qx status=0 "$f" || {
			echo "list failed: $(cat "$f")" >&2
			bad=$((bad + 1))
			continue
		}
		sed '$d' "$f" | jq -e 'type == "array" or . == null' >/dev/null || {
			echo "list printed broken JSON: $(cat "$f")" >&2
			bad=$((bad + 1))
		}
	done
	for ((i = 0; i < 20; i++)); do
		grep -qx status=0 "$BATS_TEST_TMPDIR/c-$i" || fail "run -d ${ids[i]}: $(cat "$BATS_TEST_TMPDIR/c-$i")"
		grep -qx status=0 "$BATS_TEST_TMPDIR/d-$i" || fail "delete ${ids[i]}: $(cat "$BATS_TEST_TMPDIR/d-$i")"
	done
	((bad == 0)) || fail "$bad broken list answers"
	for ((i = 0; i < 20; i++)); do
		wait_gone "${ids[i]}"
	done
}
