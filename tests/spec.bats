#!/usr/bin/env bats
# spec: the default config.json, --bundle, --rootless, no overwrite.

load helpers

@test "spec: writes a valid default config.json" {
	mkdir -p "$HOSTDIR/b"
	cd "$HOSTDIR/b"
	run "$RUNTIME" spec
	assert_status 0
	local c=$HOSTDIR/b/config.json
	jq -e . "$c" >/dev/null
	[[ $(jq -r .ociVersion "$c") == 1.* ]]
	assert_eq "$(jq -r .root.path "$c")" rootfs root.path
	assert_eq "$(jq -r .root.readonly "$c")" true root.readonly
	assert_eq "$(jq -c .process.args "$c")" '["sh"]' process.args
	assert_eq "$(jq -r .process.terminal "$c")" true process.terminal
	assert_eq "$(jq -r .process.cwd "$c")" / process.cwd
	assert_eq "$(jq -r '.process.user.uid' "$c")" 0 uid
	assert_eq "$(jq -c '[.linux.namespaces[].type] | sort' "$c")" '["ipc","mount","network","pid","uts"]' namespaces
	local m
	for m in /proc /dev /dev/pts /dev/shm /dev/mqueue /sys; do
		jq -e --arg m "$m" 'any(.mounts[]; .destination == $m)' "$c" >/dev/null || fail "no $m mount"
	done
	jq -e '.linux.maskedPaths | index("/proc/kcore")' "$c" >/dev/null
	jq -e '.linux.readonlyPaths | index("/proc/sys")' "$c" >/dev/null
	jq -e '.process.capabilities.bounding | index("CAP_KILL")' "$c" >/dev/null
	jq -e '.linux.resources.devices[0] == {"allow": false, "access": "rwm"}' "$c" >/dev/null
}

@test "spec: the default config runs (with terminal off)" {
	mkdir -p "$HOSTDIR/b"
	cd "$HOSTDIR/b"
	"$RUNTIME" spec
	cp -a "$ROOTFS" "$HOSTDIR/b/rootfs"
	BUNDLE=$HOSTDIR/b update_config '.process.terminal = false | .process.args = ["echo", "default-ok"]'
	ar_ok run "$CID"
	assert_output_contains default-ok
	rm -rf "$HOSTDIR/b/rootfs"
}

@test "spec: --bundle writes into that directory" {
	mkdir -p "$HOSTDIR/b2"
	cd /
	run "$RUNTIME" spec --bundle "$HOSTDIR/b2"
	assert_status 0
	jq -e . "$HOSTDIR/b2/config.json" >/dev/null
	[[ ! -e /config.json ]]
}

@test "spec: refuses to overwrite an existing config.json" {
	mkdir -p "$HOSTDIR/b"
	echo '{"mine": true}' >"$HOSTDIR/b/config.json"
	run "$RUNTIME" spec --bundle "$HOSTDIR/b"
	[[ $status -ne 0 ]]
	assert_eq "$(cat "$HOSTDIR/b/config.json")" '{"mine": true}' "config.json"
}

@test "spec: --rootless maps the caller's ids into a user namespace" {
	mkdir -p "$HOSTDIR/b"
	run "$RUNTIME" spec --rootless --bundle "$HOSTDIR/b"
	assert_status 0
	local c=$HOSTDIR/b/config.json
	jq -e 'any(.linux.namespaces[]; .type == "user")' "$c" >/dev/null || fail "no user ns"
	assert_eq "$(jq -r '.linux.uidMappings[0].hostID' "$c")" "$(id -u)" uid-map
	assert_eq "$(jq -r '.linux.uidMappings[0].containerID' "$c")" 0 uid-map
	assert_eq "$(jq -r '.linux.gidMappings[0].hostID' "$c")" "$(id -g)" gid-map
	# no resources a rootless runtime cannot set
	jq -e '(.linux.resources // {}) | has("devices") | not' "$c" >/dev/null || fail "rootless spec has device rules"
	# no network namespace: a rootless container keeps the host's (runc)
	jq -e 'all(.linux.namespaces[]; .type != "network")' "$c" >/dev/null || fail "rootless spec has a network ns"
}

@test "spec: a missing --bundle directory is an error" {
	run "$RUNTIME" spec --bundle "$HOSTDIR/missing"
	[[ $status -ne 0 ]]
}
