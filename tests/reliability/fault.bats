#!/usr/bin/env bats
# Fault injection: agentrun is SIGKILLed at each stage of create, start, exec and delete (the
# AR_FAULT points of runtime/container.c, lifecycle.c and exec.c, picked by $AGENTRUN_FAULT).
# After each kill, `delete --force` (or `state`, then `delete`) must leave no cgroup, mount,
# network namespace, state dir, monitor or container process, and a crashed create must never
# show as running in `list`, nor become running through `start`.
#
# The points exist only in a build configured with --enable-fault-injection.  Build a copy:
#   cp -a . /tmp/fi && cd /tmp/fi && ./configure --enable-fault-injection && make
#   AGENTRUN_FAULT_BIN=/tmp/fi/agentrun bats tests/reliability/fault.bats
# Without one, those tests skip and say why.  The random-kill tests run with any build.

load helpers-reliability

setup_file() {
	rel_setup_file
}

setup() {
	FAULT_BIN=${AGENTRUN_FAULT_BIN:-$RUNTIME}
	RUNTIME=$FAULT_BIN
	rel_setup
	update_config '.process.args = ["sleep", "1000"]'
}

teardown() {
	rel_teardown
}

requires_fault_build() {
	[[ -x $FAULT_BIN ]] || skip "AGENTRUN_FAULT_BIN=$FAULT_BIN is not an executable"
	# AR_FAULT() compiles to nothing without --enable-fault-injection, and so does the name
	grep -qa AGENTRUN_FAULT "$FAULT_BIN" ||
		skip "$FAULT_BIN was built without --enable-fault-injection (set AGENTRUN_FAULT_BIN)"
}

# killed_at POINT VERB ARGS...: the verb must die of SIGKILL at POINT, which proves the point
# is on the path.
killed_at() {
	local point=$1
	shift
	export AGENTRUN_FAULT=$point
	ar "$@"
	unset AGENTRUN_FAULT
	[[ $status -eq 137 ]] ||
		fail "agentrun $* was not killed at $point (status $status): the point is not reached"
}

# init_netns ID: the netns inode of the init that the state records, if it is alive.
init_netns() {
	local pid
	pid=$(jq -r '.pid // 0' "$AR_ROOT/$1/state.json" 2>/dev/null)
	if [[ $pid -gt 0 ]]; then
		netns_of "$pid"
	fi
	return 0
}

# never_running ID: list works and does not show ID running; state does not crash.
never_running() {
	local id=$1 st
	ar list --format json
	assert_status 0
	st=$(status_of "$id")
	[[ $st != running ]] || fail "a crashed create shows as running in list"
	ar state "$id"
	((status == 0 || status == 1)) || fail "state crashed with status $status"
	if ((status == 0)); then
		jq -e .status <<<"$output" >/dev/null || fail "state printed no JSON: $output"
	fi
}

# cleanup_by MODE ID [NETNS]: remove what the crash left, by `delete --force` or by `state`
# then `delete` (--force only for a dir with no state, which plain delete calls absent), and
# check that nothing is left.
cleanup_by() {
	local mode=$1 id=$2 netns=${3:-}
	if [[ $mode == force ]]; then
		ar delete --force "$id"
		assert_status 0
	else
		ar state "$id"
		if ((status == 0)); then
			ar delete "$id"
			assert_status 0
		else
			assert_output_contains "does not exist"
			ar delete --force "$id"
			assert_status 0
		fi
	fi
	wait_gone "$id" "$netns"
	ar list --format json
	assert_status 0
	[[ $(status_of "$id") == absent ]] || fail "$id still listed after delete"
}

# crash_create POINT MODE: create killed at POINT; never running; nothing left after MODE.
crash_create() {
	local point=$1 mode=$2 id netns
	requires_fault_build
	id=$(new_id)
	killed_at "$point" create "$id"
	never_running "$id"
	netns=$(init_netns "$id")
	cleanup_by "$mode" "$id" "$netns"
}

@test "fault create:after-statedir, then delete --force" {
	crash_create create:after-statedir force
}

@test "fault create:after-statedir, then state and delete" {
	crash_create create:after-statedir state
}

@test "fault create:after-cgroup, then delete --force" {
	crash_create create:after-cgroup force
}

@test "fault create:after-cgroup, then state and delete" {
	crash_create create:after-cgroup state
}

@test "fault create:after-clone, then delete --force" {
	crash_create create:after-clone force
}

@test "fault create:after-clone, then state and delete" {
	crash_create create:after-clone state
}

@test "fault create:after-hooks (prestart hook ran), then delete --force" {
	update_config '.hooks.prestart = [{path: "/bin/true"}]'
	crash_create create:after-hooks force
}

@test "fault create:after-hooks (prestart hook ran), then state and delete" {
	update_config '.hooks.prestart = [{path: "/bin/true"}]'
	crash_create create:after-hooks state
}

# The init forks into its pid namespace only when it joins a user namespace by path: the
# runtime dies knowing the intermediate child, not the init.
userns_holder() {
	command -v unshare >/dev/null || skip "needs unshare(1)"
	unshare --user --map-root-user sleep 600 &
	USERNS_PID=$!
	on_teardown "kill $USERNS_PID"
	sleep 0.2
	update_config '.linux.namespaces += [{type: "user", path: $p}]
		| del(.linux.uidMappings, .linux.gidMappings)' --arg p "/proc/$USERNS_PID/ns/user"
}

@test "fault create:before-pid-saved (joined user namespace), then delete --force" {
	requires_fault_build
	userns_holder
	crash_create create:before-pid-saved force
}

@test "fault create:before-pid-saved (joined user namespace), then state and delete" {
	requires_fault_build
	userns_holder
	crash_create create:before-pid-saved state
}

@test "fault create:after-ready, then delete --force" {
	crash_create create:after-ready force
}

@test "fault create:after-ready, then state and delete" {
	crash_create create:after-ready state
}

@test "fault create:before-commit, then delete --force" {
	crash_create create:before-commit force
}

@test "fault create:before-commit, then state and delete" {
	crash_create create:before-commit state
}

@test "fault create:after-commit, then delete --force" {
	crash_create create:after-commit force
}

@test "fault create:after-commit, then state and delete" {
	crash_create create:after-commit state
}

@test "a create killed before its commit never starts: start refuses the half-made container" {
	local point id
	requires_fault_build
	for point in create:after-ready create:before-commit; do
		id=$(new_id)
		killed_at "$point" create "$id"
		ar start "$id"
		[[ $status -ne 0 ]] || fail "start of a create killed at $point succeeded"
		[[ $(status_of "$id") != running ]] || fail "a create killed at $point is running after start"
		cleanup_by force "$id" "$(init_netns "$id")"
	done
}

@test "fault start:after-release, then delete --force" {
	local id netns
	requires_fault_build
	id=$(new_id)
	ar create "$id"
	assert_status 0
	netns=$(init_netns "$id")
	killed_at start:after-release start "$id"
	never_running "$id"
	cleanup_by force "$id" "$netns"
}

# crash_exec POINT: exec killed at POINT in a running container; the container stays usable
# (state works, another exec works), and delete --force removes it with the orphaned process.
crash_exec() {
	local point=$1 id netns
	requires_fault_build
	id=$(new_id)
	ar run -d "$id"
	assert_status 0
	netns=$(init_netns "$id")
	killed_at "$point" exec "$id" sleep 777
	ar state "$id"
	assert_status 0
	[[ $(jq -r .status <<<"$output") == running ]] || fail "container not running after the crash"
	ar exec "$id" true
	assert_status 0
	cleanup_by force "$id" "$netns"
}

@test "fault exec:after-clone, then delete --force" {
	crash_exec exec:after-clone
}

@test "fault exec:after-listener (exec audit handed over), then delete --force" {
	crash_exec exec:after-listener
}

@test "fault exec:after-start (the process runs), then delete --force" {
	crash_exec exec:after-start
}

# crash_delete POINT MODE: delete --force killed at POINT; a second delete finishes the job.
crash_delete() {
	local point=$1 mode=$2 id netns
	requires_fault_build
	id=$(new_id)
	ar run -d "$id"
	assert_status 0
	netns=$(init_netns "$id")
	killed_at "$point" delete --force "$id"
	never_running "$id"
	cleanup_by "$mode" "$id" "$netns"
}

@test "fault delete:after-kill, then delete --force" {
	crash_delete delete:after-kill force
}

@test "fault delete:after-kill, then state and delete" {
	crash_delete delete:after-kill state
}

@test "fault delete:after-cgroup, then delete --force" {
	crash_delete delete:after-cgroup force
}

@test "fault delete:after-cgroup, then state and delete" {
	crash_delete delete:after-cgroup state
}

@test "fault delete:before-statedir, then delete --force" {
	crash_delete delete:before-statedir force
}

@test "fault delete:before-statedir, then state and delete" {
	crash_delete delete:before-statedir state
}

# No fault build needed: SIGKILL at a random moment of the whole create (1 to 120 ms in).
@test "SIGKILL at a random moment of create, 30 times: never running, nothing left" {
	local i id ms netns
	for ((i = 0; i < 30; i++)); do
		id=$(new_id r)
		ms=$((RANDOM % 120 + 1))
		timeout -s KILL "0.$(printf '%03d' "$ms")" "$RUNTIME" --root "$AR_ROOT" create \
			--bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 || true
		[[ $(status_of "$id") != running ]] || fail "create killed after $ms ms shows as running"
		netns=$(init_netns "$id")
		cleanup_by force "$id" "$netns"
	done
}

@test "SIGKILL at a random moment of delete, 20 times: a second delete --force cleans up" {
	local i id ms netns
	for ((i = 0; i < 20; i++)); do
		id=$(new_id r)
		ar run -d "$id"
		assert_status 0
		netns=$(init_netns "$id")
		ms=$((RANDOM % 60 + 1))
		timeout -s KILL "0.$(printf '%03d' "$ms")" "$RUNTIME" --root "$AR_ROOT" delete --force \
			"$id" </dev/null >/dev/null 2>&1 || true
		cleanup_by force "$id" "$netns"
	done
}
