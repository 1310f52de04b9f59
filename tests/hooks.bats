#!/usr/bin/env bats
# OCI hooks: all six phases, in order, with the state on stdin; env, args,
# timeout; a failing hook fails the step with its output and leaves nothing.

load helpers

setup() {
	ar_setup
	# $OUT is /out inside, so one script serves the host-side phases and
	# startContainer (which runs inside the container, after pivot_root)
	cat >"$OUT/hook.sh" <<-'EOF'
		#!/bin/sh
		# hook.sh PHASE LOG: log "PHASE STATUS ID PID" and the raw state
		state=$(cat)
		field() { echo "$state" | sed -n "s/.*\"$1\" *: *\"\{0,1\}\([^\",}]*\).*/\1/p"; }
		echo "$1 $(field status) $(field id) $(field pid)" >> "$2"
		echo "$1 $state" >> "$2.raw"
	EOF
	chmod 755 "$OUT/hook.sh"
	LOG=$OUT/hooks.log
}

# hook_json PHASE: one hook entry for PHASE
hook_json() {
	if [[ $1 == startContainer ]]; then
		jq -n --arg p "$1" '{path: "/out/hook.sh", args: ["hook.sh", $p, "/out/hooks.log"]}'
	else
		jq -n --arg p "$1" --arg h "$OUT/hook.sh" --arg l "$LOG" '{path: $h, args: ["hook.sh", $p, $l]}'
	fi
}

all_hooks() {
	local p
	for p in prestart createRuntime createContainer startContainer poststart poststop; do
		update_config ".hooks.$p = [$(hook_json "$p")]"
	done
}

# phases: the first word of each line of the hook log
phases() {
	cut -d' ' -f1 "$LOG" | tr '\n' ' '
}

# full_life: run -d, stop, delete; all hooks have run
full_life() {
	update_config '.process.args = ["sleep", "100"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" running
	wait_for_lines "$LOG" 5
	ar_ok kill "$CID" KILL
	wait_for_state "$CID" stopped
	ar_ok delete "$CID"
	cat "$LOG" >&2
}

@test "hooks: all six phases run, in order" {
	all_hooks
	full_life
	local want="prestart createRuntime createContainer startContainer poststart poststop "
	if [[ $RUNTIME_NAME == runc ]]; then
		# runc runs poststart while the container execs: the two may swap
		local got
		got=$(phases | sed 's/poststart startContainer/startContainer poststart/')
		assert_eq "$got" "$want" "hook order"
	else
		assert_eq "$(phases)" "$want" "hook order"
	fi
}

@test "hooks: each hook gets the state on stdin with id, pid and bundle" {
	all_hooks
	full_life
	local phase json
	while read -r phase json; do
		jq -e . >/dev/null <<<"$json" || fail "$phase: not JSON: $json"
		assert_eq "$(jq -r .id <<<"$json")" "$CID" "$phase id"
		assert_eq "$(jq -r .bundle <<<"$json")" "$BUNDLE" "$phase bundle"
		assert_eq "$(jq -r .ociVersion <<<"$json" | cut -c1)" 1 "$phase ociVersion"
		if [[ $phase != poststop ]]; then
			(($(jq -r .pid <<<"$json") > 0)) || fail "$phase: no pid: $json"
		fi
	done <"$LOG.raw"
}

@test "hooks: the state is created before start, running in poststart, stopped in poststop" {
	agentrun_only "runc 1.1.5 says creating in prestart/createRuntime/createContainer and created in poststart"
	all_hooks
	full_life
	local phase status
	while read -r phase status _; do
		case $phase in
		prestart | createRuntime | createContainer | startContainer) assert_eq "$status" created "$phase status" ;;
		poststart) assert_eq "$status" running "$phase status" ;;
		poststop) assert_eq "$status" stopped "$phase status" ;;
		esac
	done <"$LOG"
}

@test "hooks: host-side hooks see the container's host pid" {
	all_hooks
	update_config '.process.args = ["sleep", "100"]'
	run_detached_ok "$CID"
	wait_for_lines "$LOG" 5
	local pid
	pid=$(init_pid "$CID")
	local phase status id hpid
	while read -r phase status id hpid; do
		case $phase in
		prestart | createRuntime | poststart) assert_eq "$hpid" "$pid" "$phase pid" ;;
		esac
	done <"$LOG"
}

@test "hooks: several hooks in one phase run in order" {
	local a b c
	a=$(hook_json prestart | jq '.args[1] = "first"')
	b=$(hook_json prestart | jq '.args[1] = "second"')
	c=$(hook_json prestart | jq '.args[1] = "third"')
	update_config ".hooks.prestart = [$a, $b, $c]"
	ar_ok run "$CID"
	assert_eq "$(phases)" "first second third " "order"
}

@test "hooks: env and args reach the hook" {
	cat >"$HOSTDIR/envhook.sh" <<-'EOF'
		#!/bin/sh
		cat > /dev/null
		echo "argv0=$0 a1=$1 a2=$2 var=$HOOKVAR leak=${AR_LEAK_MARKER:-unset}" > "$HOOKLOG"
	EOF
	chmod 755 "$HOSTDIR/envhook.sh"
	update_config '.hooks.prestart = [{path: $p, args: ["custom-argv0", "one", "two"],
		env: ["HOOKVAR=hello", ("HOOKLOG=" + $l)]}]' \
		--arg p "$HOSTDIR/envhook.sh" --arg l "$HOSTDIR/env.out"
	AR_LEAK_MARKER=1 ar_ok run "$CID"
	local got
	got=$(cat "$HOSTDIR/env.out")
	[[ $got == *"a1=one a2=two var=hello"* ]] || fail "hook saw: $got"
	# only the env given: the runtime's own environment does not leak in
	[[ $got == *"leak=unset"* ]] || fail "runtime env leaked: $got"
}

@test "hooks: a failing prestart hook fails create with its output and leaves nothing" {
	update_config '.hooks.prestart = [{path: "/bin/sh", args: ["sh", "-c", "echo hook-said-no >&2; exit 3"]}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_output_contains hook-said-no
	ar state "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "hooks: a failing createRuntime hook fails create and leaves nothing" {
	update_config '.hooks.createRuntime = [{path: "/bin/sh", args: ["sh", "-c", "echo runtime-hook-failed >&2; exit 1"]}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_output_contains runtime-hook-failed
	assert_no_leftovers "$CID"
}

@test "hooks: a failing createContainer hook fails create and leaves nothing" {
	update_config '.hooks.createContainer = [{path: "/bin/sh", args: ["sh", "-c", "echo container-hook-failed >&2; exit 1"]}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "hooks: a failing startContainer hook stops the container; the program never runs" {
	update_config '.hooks.startContainer = [{path: "/bin/sh", args: ["sh", "-c", "exit 1"]}]'
	set_cmd 'echo ran > /out/ran'
	create_ok "$CID"
	# start may return before the hook runs (runc does): its status is not checked
	ar start "$CID"
	wait_for_state "$CID" stopped
	[[ ! -e $OUT/ran ]]
	ar_ok delete --force "$CID"
	assert_no_leftovers "$CID"
}

@test "hooks: a hook that times out fails the step" {
	update_config '.hooks.prestart = [{path: "/bin/sleep", args: ["sleep", "30"], timeout: 1}]'
	local t0=$SECONDS
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	((SECONDS - t0 < 15)) || fail "the timeout was not applied"
	assert_no_leftovers "$CID"
}

@test "hooks: a missing hook binary fails the step" {
	update_config '.hooks.prestart = [{path: "/no/such/hook", args: ["hook"]}]'
	ar_detached create "$CID"
	[[ $status -ne 0 ]]
	assert_output_contains /no/such/hook
	assert_no_leftovers "$CID"
}

@test "hooks: a failing poststop hook does not stop delete" {
	update_config '.hooks.poststop = [{path: "/bin/sh", args: ["sh", "-c", "exit 1"]}]'
	update_config '.process.args = ["true"]'
	run_detached_ok "$CID"
	wait_for_state "$CID" stopped
	ar delete "$CID"
	ar state "$CID"
	[[ $status -ne 0 ]]
	assert_no_leftovers "$CID"
}

@test "hooks: run calls poststop when the container exits" {
	update_config ".hooks.poststop = [$(hook_json poststop)]"
	ar_ok run "$CID"
	[[ $(phases) == "poststop " ]]
}

@test "hooks: the hook's cwd is the bundle" {
	update_config '.hooks.prestart = [{path: "/bin/sh", args: ["sh", "-c", "cat >/dev/null; pwd > \"$0\"", $o]}]' \
		--arg o "$HOSTDIR/hookcwd"
	cd /
	ar_ok run -b "$BUNDLE" "$CID"
	assert_eq "$(cat "$HOSTDIR/hookcwd")" "$BUNDLE"
}
