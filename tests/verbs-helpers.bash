# shellcheck shell=bash
# Helpers for tests/verbs.bats (ps, pause/resume, update, events, features).
# Load after helpers.bash: every test runs under a host policy of its own, written in its temp
# dir, with every hardening control off (runc semantics) and the audit log kept in the temp dir.

# write_policy FILE [JQ-EXPR]: a passthrough host policy, edited by JQ-EXPR.
write_policy() {
	local file=$1 expr=${2:-.}
	jq -n --arg dir "$BATS_TEST_TMPDIR/audit" '{
		controls: {network: false, readonly_rootfs: false, seccomp: false, capabilities: false,
			no_new_privileges: false, limits: false, rlimits: false, devices: false,
			masked_paths: false, sysctl: false, timeout: false, namespaces: false},
		audit: {enabled: true, dir: $dir}
	}' | jq "$expr" >"$file"
}

verbs_setup() {
	ar_setup
	POLICY=$BATS_TEST_TMPDIR/policy.json
	write_policy "$POLICY"
	export AGENTRUN_POLICY=$POLICY
}

# start_sleeper [ID]: run -d a container whose init sleeps; wait until it runs.
start_sleeper() {
	local id=${1:-$CID}
	update_config '.process.args = ["sleep", "1000"]'
	run_detached_ok "$id"
	wait_for_state "$id" running
}

# cg_file CONTROLLER FILE: the path of FILE in the container's cgroup for CONTROLLER.
cg_file() {
	local dir
	dir=$(container_cgroup "$CID" "$1") || fail "no $1 cgroup for $CID"
	echo "$dir/$2"
}

# memory_limit: the container's memory limit in bytes, v1 or v2.
memory_limit() {
	if [[ -e $(cg_file memory memory.max) ]]; then
		cat "$(cg_file memory memory.max)"
	else
		cat "$(cg_file memory memory.limit_in_bytes)"
	fi
}

# is_frozen PID: the freezer froze PID's cgroup (v1 freezer.state, v2 cgroup.freeze/events).
is_frozen() {
	local dir
	dir=$(cgroup_dir "$1" freezer 2>/dev/null)
	if [[ -n $dir && -e $dir/freezer.state ]]; then
		[[ $(cat "$dir/freezer.state") == FROZEN ]]
	else
		dir=/sys/fs/cgroup$(sed -n 's/^0:://p' "/proc/$1/cgroup")
		grep -q '^frozen 1' "$dir/cgroup.events" 2>/dev/null
	fi
}

# wait_pid_gone PID [SECONDS]: a background job of the test has ended.
wait_pid_gone() {
	local pid=$1 tries=$((${2:-10} * 10))
	while ((tries-- > 0)); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	fail "process $pid did not end"
}
