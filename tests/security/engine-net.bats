#!/usr/bin/env bats
# Networks an engine wires: the job still sees only lo.
#  - a prestart hook that does what Docker's libnetwork-setkey does with its bridge: a veth pair
#    on the host, one end moved into the container's netns (found through the state's pid);
#  - a config whose network namespace is a path to a netns that already has an interface (a
#    Kubernetes pod sandbox, a Podman network).
# No address is given to anything, and no packet is sent.
# (Docker end to end is in tests/engines/.)

load helpers-security

setup() {
	sec_setup
	requires_cmd ip jq
}

# A prestart hook script: reads the state on stdin, wires VETH_HOST/VETH_JOB into the netns of
# the state's pid, and records what it did in $TMP/hook.out.
write_veth_hook() {
	cat >"$TMP/veth-hook" <<-EOF
		#!/bin/sh
		set -e
		pid=\$(jq -r .pid)
		[ "\$pid" -gt 0 ]
		ip link add $1 type veth peer name $2
		ip link set $2 netns "\$pid"
		echo "wired $2 into \$(readlink /proc/\$pid/ns/net) of pid \$pid" >"$TMP/hook.out"
	EOF
	chmod 755 "$TMP/veth-hook"
	update_config '.hooks.prestart = [{path: $p, args: ["veth-hook"]}]' --arg p "$TMP/veth-hook"
}

# hooked_veth CONFIG: the hook succeeds, the job sees only lo in a netns that is neither the
# host's nor the one the hook wired.
hooked_veth() {
	local va vb
	va=$(short_name arva)
	vb=$(short_name arvb)
	on_teardown "ip link del $va 2>/dev/null"
	write_config "$1"
	write_veth_hook "$va" "$vb"
	set_args probe net "$HOST_NETNS"
	ar run "$CID"
	assert_status 0
	assert_output_contains "ok net"
	assert_output_not_contains "$vb"
	[[ -s $TMP/hook.out ]] || fail "the hook did not run to its end"
	local wired
	wired=$(sed -n 's/.* into \(net:\[[0-9]*\]\) .*/\1/p' "$TMP/hook.out")
	[[ -n $wired ]] || fail "hook.out: $(cat "$TMP/hook.out")"
	assert_output_not_contains "netns $wired"
	# the engine's teardown: the host end goes (with the abandoned netns, or by hand)
	ip link del "$va" 2>/dev/null || true
	run ip link show "$va"
	[[ $status -ne 0 ]] || fail "$va is still there"
}

@test "default config: a prestart hook wires a veth into the netns; the job sees only lo" {
	hooked_veth default
}

@test "weak config (host network): a prestart hook wires a veth; the job sees only lo" {
	hooked_veth weak
}

@test "a created container with a wired veth: exec sees only lo; delete leaves no veth" {
	local va vb
	va=$(short_name arva)
	vb=$(short_name arvb)
	on_teardown "ip link del $va 2>/dev/null"
	write_config default
	write_veth_hook "$va" "$vb"
	set_args sleep 60
	ar_bg_ok create "$CID"
	[[ -s $TMP/hook.out ]] || fail "the hook did not run"
	ar exec "$CID" probe net "$HOST_NETNS"
	assert_status 0
	assert_output_not_contains "$vb"
	ar_ok delete --force "$CID"
	ip link del "$va" 2>/dev/null || true
	run ip link show "$va"
	[[ $status -ne 0 ]] || fail "$va is still there"
}

# netns_path CONFIG: the config joins a netns the test made, with an interface in it.
netns_path() {
	local ns link
	ns=$(short_name arns)
	link=$(short_name arl)
	ip netns add "$ns"
	on_teardown "ip netns del $ns"
	add_fake_link "$ns" "$link"
	ip -n "$ns" link set "$link" up
	write_config "$1"
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "network")]
		+ [{type: "network", path: $p}]' --arg p "/var/run/netns/$ns"
	set_args probe net "$HOST_NETNS" "$(stat -L -c %i "/var/run/netns/$ns")"
	ar run "$CID"
	assert_status 0
	assert_output_contains "ok net"
	assert_output_not_contains "$link"
	# the engine's netns is as it was
	run ip -n "$ns" -o link show "$link"
	assert_status 0
}

@test "default config: a netns path with an interface in it; the job sees only lo" {
	netns_path default
}

@test "weak config: a netns path with an interface in it; the job sees only lo" {
	netns_path weak
}

@test "a netns path and a prestart hook together; the job sees only lo" {
	local ns link va vb
	ns=$(short_name arns)
	link=$(short_name arl)
	va=$(short_name arva)
	vb=$(short_name arvb)
	ip netns add "$ns"
	on_teardown "ip netns del $ns"
	on_teardown "ip link del $va 2>/dev/null"
	add_fake_link "$ns" "$link"
	write_config default
	update_config '.linux.namespaces = [.linux.namespaces[] | select(.type != "network")]
		+ [{type: "network", path: $p}]' --arg p "/var/run/netns/$ns"
	write_veth_hook "$va" "$vb"
	set_args probe net "$HOST_NETNS" "$(stat -L -c %i "/var/run/netns/$ns")"
	ar run "$CID"
	assert_status 0
	assert_output_not_contains "$vb"
	assert_output_not_contains "$link"
	# the hook wired the pod's netns, which keeps its interfaces
	run ip -n "$ns" -o link show
	assert_output_contains "$vb"
	assert_output_contains "$link"
}

# Docker's libnetwork-setkey keeps the container's first netns alive (a bind mount under
# /var/run/docker/netns) and wires eth0 into it: here `ip netns attach` does the keeping.  The
# job's netns is fresh; its /sys must be too, or /sys/class/net shows the engine's interfaces.
@test "like Docker: the hook keeps the wired netns alive; the job sees only lo, in /sys too" {
	local ns va vb
	ns=$(short_name arns)
	va=$(short_name arva)
	vb=$(short_name arvb)
	on_teardown "ip netns del $ns 2>/dev/null"
	on_teardown "ip link del $va 2>/dev/null"
	write_config default
	cat >"$TMP/keep-hook" <<-EOF
		#!/bin/sh
		set -e
		pid=\$(jq -r .pid)
		ip netns attach $ns "\$pid"
		ip link add $va type veth peer name $vb
		ip link set $vb netns $ns
		echo done >"$TMP/hook.out"
	EOF
	chmod 755 "$TMP/keep-hook"
	update_config '.hooks.prestart = [{path: $p}]' --arg p "$TMP/keep-hook"
	set_args probe net "$HOST_NETNS"
	ar run "$CID"
	[[ -s $TMP/hook.out ]] || fail "the hook did not run to its end"
	assert_status 0
	assert_output_not_contains "$vb"
	run ip -n "$ns" -o link show "$vb"
	assert_status 0
}
