#!/usr/bin/env bats
# contrib/policy/passthrough.json gives the caller's config unchanged (runc's semantics); the
# default policy gives the hardened one.  Both seen through `agentrun inspect ID`.

load helpers-security

# The emitter leaves out booleans that are false, as an absent key means the same; nothing else
# may differ.
NORMALIZE='del(.process.terminal | select(. == false))
	| del(.process.noNewPrivileges | select(. == false))
	| del(.root.readonly | select(. == false))'
# What the runtime adds: runc's implicit device cgroup rules (mknod of any node, the default
# devices, /dev/pts, each linux.devices entry), appended after the config's own rules, which are
# kept as they were.
IMPLICIT_RULES='if $n > 0 then .linux.resources.devices |= .[:$n] else . end'

# A config with more in it than `agentrun spec` writes: every section the policy touches.
enrich_config() {
	update_config '
		.annotations = {"org.example.owner": "tests"}
		| .process.env += ["AGENT=1"]
		| .process.rlimits = [{type: "RLIMIT_NOFILE", hard: 4096, soft: 1024},
			{type: "RLIMIT_CORE", hard: 1048576, soft: 1048576}]
		| .linux.sysctl = {"net.ipv4.ip_default_ttl": "61", "kernel.shmmax": "65536"}
		| .linux.devices = [{path: "/dev/zero2", type: "c", major: 1, minor: 5, fileMode: 438,
			uid: 0, gid: 0}]
		| .linux.resources = {pids: {limit: 4096}, memory: {limit: 8589934592},
			devices: [{allow: false, access: "rwm"}, {allow: true, type: "c", major: 1,
			minor: 5, access: "rwm"}]}
		| .hooks = {poststop: [{path: "/bin/true", args: ["true"]}]}'
}

# passthrough_same CONFIG: under passthrough the effective spec is the bundle's config.json.
passthrough_same() {
	write_passthrough_policy
	write_config "$1"
	[[ $1 != default ]] || enrich_config
	ar_bg_ok create "$CID"
	local n
	n=$(jq '.linux.resources.devices // [] | length' "$BUNDLE/config.json")
	_ar inspect "$CID" | jq -S --argjson n "$n" ".effective_spec | $IMPLICIT_RULES | $NORMALIZE" \
		>"$TMP/effective.json"
	jq -S "$NORMALIZE" "$BUNDLE/config.json" >"$TMP/config.json"
	run diff -u "$TMP/config.json" "$TMP/effective.json"
	[[ $status -eq 0 ]] || fail "passthrough changed the $1 config: $output"
	run jq -r '.policy.controls[] | select(.control != "audit") | .verdict' <(_ar inspect "$CID")
	assert_output_not_contains "tightened"
	assert_output_not_contains "set"
}

@test "passthrough: the default config comes out unchanged" {
	passthrough_same default
}

@test "passthrough: the weak config comes out unchanged" {
	passthrough_same weak
}

@test "passthrough: the job runs as runc would run it (rw rootfs, host net, the caller's caps)" {
	write_passthrough_policy
	write_config weak
	set_args sh -c 'echo hi >/written && cat /written; readlink /proc/self/ns/net; grep -E "^(CapEff|NoNewPrivs|Seccomp):" /proc/self/status'
	ar run "$CID"
	assert_status 0
	assert_output_contains "hi"
	assert_output_contains "$HOST_NETNS"
	assert_output_contains "NoNewPrivs:	0"
	assert_output_contains "Seccomp:	0"
	assert_output_not_contains "CapEff:	00000000000004fb"
	rm -f "$BUNDLE/rootfs/written"
}

# hardened_spec CONFIG: the default policy's effective spec has every control applied.
hardened_spec() {
	write_config "$1"
	ar_bg_ok create "$CID"
	local e
	e=$(_ar inspect "$CID" | jq -c .effective_spec)
	run jq -e --argjson allowed "$AGENT_CAPS" '
		(.root.readonly == true)
		and (.process.noNewPrivileges == true)
		and ([.process.capabilities | (.bounding, .effective, .permitted, .inheritable) // []
			| .[] | select(. as $c | $allowed | index($c) | not)] == [])
		and ((.process.capabilities.ambient // []) == [])
		and (.linux.resources.pids.limit == 512)
		and (.linux.resources.memory.limit == 2147483648)
		and (.linux.resources.memory.swap == 2147483648)
		and (.linux.resources.cpu.quota == 200000 and .linux.resources.cpu.period == 100000)
		and ([.process.rlimits[] | select(.type == "RLIMIT_CORE" and .hard == 0 and .soft == 0)]
			| length == 1)
		and ([.mounts[] | select(.destination == "/tmp" and .type == "tmpfs"
			and (.options | index("nosuid") and index("nodev") and index("size=268435456")))]
			| length == 1)
		and ((["/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
			"/proc/acpi", "/proc/scsi", "/sys/firmware"] - .linux.maskedPaths) == [])
		and ((["/proc/sys", "/proc/sysrq-trigger", "/proc/irq", "/proc/bus", "/proc/fs"]
			- .linux.readonlyPaths) == [])
		and (([.linux.namespaces[].type] | sort) as $ns
			| (["ipc", "mount", "network", "pid", "uts"] - $ns) == [])
		and ([.mounts[] | select(.type == "sysfs" or .type == "cgroup")
			| select(.options | index("ro") | not)] == [])' <<<"$e"
	[[ $status -eq 0 ]] || fail "the $1 config is not hardened: $(jq -S . <<<"$e")"
}

@test "default policy: the default config comes out hardened" {
	hardened_spec default
}

@test "default policy: the weak config comes out hardened" {
	hardened_spec weak
}

# Every control is explained: a verdict and a reason.
@test "inspect explains every control of the weak config, with the policy's summary" {
	write_config weak
	ar_bg_ok create "$CID"
	run _ar inspect "$CID"
	assert_status 0
	local c
	for c in network namespaces rootfs tmp seccomp capabilities no_new_privileges memory pids \
		cpus rlimits devices masked_paths timeout audit; do
		jq -e --arg c "$c" '[.policy.controls[] | select(.control == $c and .verdict != ""
			and .why != "")] | length >= 1' <<<"$output" >/dev/null ||
			fail "inspect does not explain $c: $output"
	done
	assert_eq "$(verdict "$CID" rootfs)" tightened "rootfs verdict"
	assert_eq "$(verdict "$CID" no_new_privileges)" tightened "no_new_privileges verdict"
	assert_eq "$(verdict "$CID" capabilities)" tightened "capabilities verdict"
	assert_eq "$(verdict "$CID" network)" tightened "network verdict"
	assert_eq "$(inspect "$CID" '.policy.network_isolated')" true
	assert_eq "$(inspect "$CID" '.policy.agent_seccomp')" true
	assert_eq "$(inspect "$CID" '.policy.timeout_s')" 3600
	assert_eq "$(inspect "$CID" '.policy.audit_log')" "\"$AUDIT_DIR/$CID.jsonl\""
	# state stays runc's
	run _ar state "$CID"
	assert_status 0
	jq -e 'has("ociVersion") and has("id") and has("status") and has("pid") and has("bundle")' \
		<<<"$output" >/dev/null || fail "state is not runc's: $output"
}
