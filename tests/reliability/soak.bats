#!/usr/bin/env bats
# Soak: SOAK_N sequential `run` lifecycles of busybox `true`, then SOAK_PAR more through
# SOAK_WORKERS parallel workers, under the hardened default policy.  Afterwards the host's
# mounts, cgroup dirs and processes are back where they started (nothing of ours is left, found
# by ID prefix and path, so that other jobs on the machine do not count), the state root is
# empty, no zombie is left, and a `run` holds as many fds as it did at the start.
#   bats tests/reliability/soak.bats                           (CI: 200 + 80)
#   SOAK_N=1000 SOAK_PAR=200 bats tests/reliability/soak.bats  (make soak)
# The figures go to the TAP output (# lines) and to $SOAK_REPORT if set.

load helpers-reliability

SOAK_N=${SOAK_N:-200}
SOAK_PAR=${SOAK_PAR:-80}
SOAK_WORKERS=${SOAK_WORKERS:-4}

setup_file() {
	rel_setup_file
}

setup() {
	rel_setup
	ERRLOG=$BATS_TEST_TMPDIR/errors
	: >"$ERRLOG"
}

teardown() {
	rel_teardown
}

report() {
	echo "# $*" >&3
	[[ -z ${SOAK_REPORT:-} ]] || echo "$*" >>"$SOAK_REPORT"
}

# one_run ID: a whole lifecycle; failures go to $ERRLOG (bounded).
one_run() {
	if ! timeout -k 5 "$AR_TIMEOUT" "$RUNTIME" --root "$AR_ROOT" run "$1" </dev/null \
		>/dev/null 2>"$BATS_TEST_TMPDIR/err-$1"; then
		{
			echo "run $1 failed:"
			head -c 2000 "$BATS_TEST_TMPDIR/err-$1"
		} >>"$ERRLOG"
		rm -f "$BATS_TEST_TMPDIR/err-$1"
		return 1
	fi
	rm -f "$BATS_TEST_TMPDIR/err-$1"
}

# fd_probe TAG: the fds of a `run` (and of its monitor) while its job sleeps, "RUN MONITOR".
fd_probe() {
	local id pid mon i
	id=$(new_id "fd$1")
	update_config '.process.args = ["sleep", "2"]'
	"$RUNTIME" --root "$AR_ROOT" run "$id" </dev/null >/dev/null 2>&1 &
	pid=$!
	for ((i = 0; i < 50; i++)); do
		mon=$(jq -r '.monitorPid // 0' "$AR_ROOT/$id/state.json" 2>/dev/null)
		[[ -n $mon && $mon -gt 0 && -d /proc/$mon ]] &&
			[[ $(jq -r .started "$AR_ROOT/$id/state.json" 2>/dev/null) == true ]] && break
		sleep 0.1
	done
	sleep 0.3
	echo "$(ls "/proc/$pid/fd" 2>/dev/null | wc -l) $(ls "/proc/$mon/fd" 2>/dev/null | wc -l)"
	wait "$pid"
	update_config '.process.args = ["true"]'
}

# ours FILE: the lines of a snapshot diff that belong to this test.
ours() {
	grep -E -- "$ID_PREFIX|$BATS_TEST_TMPDIR" "$1" || true
}

# settle: give the host's init a moment to reap what it inherited.
settle() {
	local i
	for ((i = 0; i < 50; i++)); do
		[[ -z $(zombies) ]] && return 0
		sleep 0.2
	done
}

# exits_ok: how many of this test's audit logs end their job with exit code 0 (the runs ran).
exits_ok() {
	grep -l '"event":"exit","id":"'"$ID_PREFIX"'-[sp][0-9]*","exit_code":0,' "$AUDIT"/*.jsonl 2>/dev/null | wc -l
}

# elapsed T0: seconds since T0 (an $EPOCHREALTIME), to the millisecond.
elapsed() {
	awk -v a="$1" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }'
}

# check_after BEFORE-SNAPSHOT LABEL SECONDS RUNS FD-BEFORE
check_after() {
	local before=$1 label=$2 secs=$3 runs=$4 fds0=$5 after=$BATS_TEST_TMPDIR/after fds1 z
	settle
	snapshot >"$after"
	fds1=$(fd_probe after)
	comm -13 "$before" "$after" >"$BATS_TEST_TMPDIR/new"
	comm -23 "$before" "$after" >"$BATS_TEST_TMPDIR/gone"
	report "$label: $runs runs in ${secs}s ($(awk -v n="$runs" -v s="$secs" 'BEGIN { printf "%.1f", s ? n / s : 0 }') runs/s), $(exits_ok "$label") of them audited with exit code 0"
	report "$label: before $(counts "$before")"
	report "$label: after  $(counts "$after")"
	report "$label: host items new $(wc -l <"$BATS_TEST_TMPDIR/new"), gone $(wc -l <"$BATS_TEST_TMPDIR/gone") (others' jobs included); ours new: $(ours "$BATS_TEST_TMPDIR/new" | wc -l)"
	report "$label: e.g. new, not ours: $(grep -vE -- "$ID_PREFIX|$BATS_TEST_TMPDIR" "$BATS_TEST_TMPDIR/new" | awk '{ print $1, ($1 == "proc" ? $3 : $2) }' | sort -u | head -6 | tr '\n' ';')"
	report "$label: fds of a run / of its monitor: before $fds0, after $fds1"
	z=$(zombies)
	report "$label: zombies of agentrun or its jobs: $(echo -n "$z" | grep -c . || true)"
	[[ -z $(ours "$BATS_TEST_TMPDIR/new") ]] || fail "leaked: $(ours "$BATS_TEST_TMPDIR/new" | head -20)"
	[[ -z $(ls -A "$AR_ROOT") ]] || fail "state root not empty: $(ls -A "$AR_ROOT" | head)"
	[[ -z $z ]] || fail "zombies: $z"
	assert_eq "$fds1" "$fds0" "fds of a run and its monitor"
	assert_eq "$(exits_ok)" "$runs" "runs audited with exit code 0"
}

@test "soak: $SOAK_N sequential run lifecycles leave the host as they found it" {
	local before=$BATS_TEST_TMPDIR/before i failed=0 t0 fds0
	fds0=$(fd_probe before)
	settle
	snapshot >"$before"
	t0=$EPOCHREALTIME
	for ((i = 0; i < SOAK_N; i++)); do
		one_run "$ID_PREFIX-s$i" || failed=$((failed + 1))
	done
	((failed == 0)) || fail "$failed of $SOAK_N runs failed: $(head -c 3000 "$ERRLOG")"
	check_after "$before" sequential "$(elapsed "$t0")" "$SOAK_N" "$fds0"
}

@test "soak: $SOAK_PAR run lifecycles through $SOAK_WORKERS parallel workers leave the host as they found it" {
	local before=$BATS_TEST_TMPDIR/before w t0 fds0 failed
	fds0=$(fd_probe before)
	settle
	snapshot >"$before"
	t0=$EPOCHREALTIME
	for ((w = 0; w < SOAK_WORKERS; w++)); do
		(
			local i f=0
			for ((i = w; i < SOAK_PAR; i += SOAK_WORKERS)); do
				one_run "$ID_PREFIX-p$i" || f=$((f + 1))
			done
			echo "$f" >"$BATS_TEST_TMPDIR/worker-$w"
		) &
	done
	wait
	failed=$(cat "$BATS_TEST_TMPDIR"/worker-* | awk '{ n += $1 } END { print n + 0 }')
	((failed == 0)) || fail "$failed of $SOAK_PAR runs failed: $(head -c 3000 "$ERRLOG")"
	check_after "$before" "parallel x$SOAK_WORKERS" "$(elapsed "$t0")" "$SOAK_PAR" "$fds0"
}
