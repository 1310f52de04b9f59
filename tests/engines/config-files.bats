#!/usr/bin/env bats
# contrib/: every config file parses, the snippets agree with each other, the
# Kubernetes installer's script works on a scratch root, and the man page
# covers every command and global option.  No engine or daemon is needed.

load lib

CONTRIB=$TOP_DIR/contrib

setup() {
	PY=/usr/bin/python3
	[[ -x $PY ]] || PY=$(command -v python3 || true)
	[[ -n $PY ]] || skip "needs python3"
}

# py CODE ARGS...: python3 with its output checked by the caller.
py() {
	local code=$1
	shift
	"$PY" -c "$code" "$@"
}

requires_toml() {
	py 'import tomllib' 2>/dev/null || skip "needs Python >= 3.11 (tomllib)"
}

# toml_get FILE EXPR: print a value of a TOML file, EXPR on `d`, as JSON.
toml_get() {
	py 'import sys, json, tomllib
d = tomllib.load(open(sys.argv[1], "rb"))
print(json.dumps(eval(sys.argv[2])))' "$1" "$2"
}

# yaml_docs FILE: each document of FILE as one line of JSON.
yaml_docs() {
	if py 'import yaml' 2>/dev/null; then
		py 'import sys, json, yaml
for d in yaml.safe_load_all(open(sys.argv[1])):
    if d is not None:
        print(json.dumps(d))' "$1"
	elif command -v yq >/dev/null; then
		yq -c . "$1"
	else
		echo "no YAML parser: install python3-yaml" >&2
		return 1
	fi
}

@test "every JSON file in contrib/ parses" {
	local f n=0
	while IFS= read -r -d '' f; do
		jq empty "$f" || fail "$f is not valid JSON"
		n=$((n + 1))
	done < <(find "$CONTRIB" -name '*.json' -print0)
	((n > 0)) || fail "no JSON file found"
}

@test "every TOML file in contrib/ parses (containerd's and Podman's)" {
	requires_toml
	local f n=0
	while IFS= read -r -d '' f; do
		log_run py 'import sys, tomllib; tomllib.load(open(sys.argv[1], "rb"))' "$f"
		assert_success
		n=$((n + 1))
	done < <(find "$CONTRIB" \( -name '*.toml' -o -name 'containers.conf' \) -print0)
	((n >= 2)) || fail "expected at least 2 TOML files, found $n"
}

@test "every YAML file in contrib/ parses; kubernetes/ holds Kubernetes objects" {
	local f n=0 docs
	while IFS= read -r -d '' f; do
		docs=$(yaml_docs "$f") || fail "$f is not valid YAML" || return
		[[ -n $docs ]] || fail "$f has no document" || return
		[[ $f == "$CONTRIB/kubernetes/"* ]] || continue
		while IFS= read -r d; do
			jq -e '(.apiVersion | type == "string") and (.kind | type == "string") and
			    (.metadata.name | type == "string")' <<<"$d" >/dev/null ||
				fail "$f: a document without apiVersion, kind or metadata.name: $d" || return
		done <<<"$docs"
		n=$((n + 1))
	done < <(find "$CONTRIB" \( -name '*.yaml' -o -name '*.yml' \) -print0)
	((n >= 3)) || fail "expected RuntimeClass, installer and Pod manifests, found $n files"
}

@test "docker: daemon.json names agentrun as a runtime" {
	run jq -r '.runtimes.agentrun.path' "$CONTRIB/docker/daemon.json"
	assert_eq "$output" /usr/local/bin/agentrun "runtimes.agentrun.path"
}

@test "podman: containers.conf has the runtime, JSON logs and the policy for conmon" {
	requires_toml
	local f=$CONTRIB/podman/containers.conf
	assert_eq "$(toml_get "$f" 'd["engine"]["runtimes"]["agentrun"]')" '["/usr/local/bin/agentrun"]' \
		"engine.runtimes.agentrun"
	assert_eq "$(toml_get "$f" '"agentrun" in d["engine"]["runtime_supports_json"]')" true \
		"agentrun in engine.runtime_supports_json"
	assert_eq "$(toml_get "$f" '[v.split("=")[0] for v in d["engine"]["conmon_env_vars"]]')" \
		'["PATH", "AGENTRUN_POLICY"]' "engine.conmon_env_vars"
}

@test "containerd and Kubernetes: one handler name, runc v2 shim, agentrun binary" {
	requires_toml
	local f=$CONTRIB/containerd/config.toml rt
	rt='d["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]'
	assert_eq "$(toml_get "$f" "list($rt)")" '["agentrun"]' "runtimes"
	assert_eq "$(toml_get "$f" "${rt}[\"agentrun\"][\"runtime_type\"]")" '"io.containerd.runc.v2"' runtime_type
	assert_eq "$(toml_get "$f" "${rt}[\"agentrun\"][\"options\"][\"BinaryName\"]")" \
		'"/usr/local/bin/agentrun"' options.BinaryName
	local rc pod
	rc=$(yaml_docs "$CONTRIB/kubernetes/runtimeclass.yaml")
	assert_eq "$(jq -r .kind <<<"$rc")" RuntimeClass kind
	assert_eq "$(jq -r .handler <<<"$rc")" agentrun "RuntimeClass handler"
	pod=$(yaml_docs "$CONTRIB/kubernetes/pod.yaml")
	assert_eq "$(jq -r .spec.runtimeClassName <<<"$pod")" "$(jq -r .metadata.name <<<"$rc")" \
		"the example Pod's runtimeClassName"
}

@test "kubernetes: the installer image carries what install.sh installs" {
	local cf=$CONTRIB/kubernetes/installer.Containerfile
	local p
	for p in /opt/agentrun/bin/agentrun /opt/agentrun/libexec/agentrun/agentrun-monitor \
		/opt/agentrun/etc/agentrun/policy.json /opt/agentrun/containerd/agentrun.toml; do
		grep -qE "^COPY .* $p\$" "$cf" || fail "$cf does not COPY $p" || return
	done
	grep -qE '^COPY contrib/containerd/config.toml /opt/agentrun/containerd/agentrun.toml$' "$cf" ||
		fail "the image's containerd snippet is not contrib/containerd/config.toml"
	run yaml_docs "$CONTRIB/kubernetes/installer.yaml"
	assert_success
	grep -q '"kind": "DaemonSet"' <<<"$output" || fail "installer.yaml has no DaemonSet"
}

@test "kubernetes: install.sh installs agentrun and the containerd import on a scratch root" {
	requires_toml
	[[ -x $TOP_DIR/agentrun ]] || skip "agentrun is not built"
	local s=$CONTRIB/kubernetes/install.sh
	if command -v shellcheck >/dev/null; then
		log_run shellcheck "$s"
		assert_success
	fi
	# The payload as installer.Containerfile lays it out.
	local pl=$BATS_TEST_TMPDIR/payload host=$BATS_TEST_TMPDIR/host
	mkdir -p "$pl/bin" "$pl/libexec/agentrun" "$pl/etc/agentrun" "$pl/containerd" "$host/etc/containerd"
	cp "$TOP_DIR/agentrun" "$pl/bin/"
	cp "$TOP_DIR/agentrun-monitor" "$pl/libexec/agentrun/" 2>/dev/null || echo fake >"$pl/libexec/agentrun/agentrun-monitor"
	cp "$CONTRIB/policy/default.json" "$pl/etc/agentrun/policy.json"
	cp "$CONTRIB/containerd/config.toml" "$pl/containerd/agentrun.toml"
	printf 'version = 2\nimports = ["/etc/containerd/other.toml"]\n\n[plugins."io.containerd.grpc.v1.cri"]\n  sandbox_image = "pause"\n' \
		>"$host/etc/containerd/config.toml"

	log_run env DRY_RUN=1 HOST="$host" PAYLOAD="$pl" sh "$s"
	assert_success
	assert_output_contains "would restart containerd"
	[[ -x $host/usr/local/bin/agentrun ]] || fail "no agentrun on the node"
	[[ -f $host/usr/local/libexec/agentrun/agentrun-monitor ]] || fail "no monitor on the node"
	cmp "$CONTRIB/containerd/config.toml" "$host/etc/containerd/conf.d/agentrun.toml" ||
		fail "the node's snippet differs from contrib/containerd/config.toml"
	cmp "$CONTRIB/policy/default.json" "$host/etc/agentrun/policy.json" || fail "policy"
	assert_eq "$(toml_get "$host/etc/containerd/config.toml" 'd["imports"]')" \
		'["/etc/containerd/conf.d/agentrun.toml", "/etc/containerd/other.toml"]' "imports"
	assert_eq "$(toml_get "$host/etc/containerd/config.toml" 'd["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"]')" \
		'"pause"' "the node's own settings"

	# Again: nothing to do.  A node policy of the admin's own is kept.
	echo '{"audit": {"enabled": true}}' >"$host/etc/agentrun/policy.json"
	log_run env DRY_RUN=1 HOST="$host" PAYLOAD="$pl" sh "$s"
	assert_success
	assert_output_contains "up to date"
	assert_eq "$(cat "$host/etc/agentrun/policy.json")" '{"audit": {"enabled": true}}' "the admin's policy"

	# A node without imports, and one without any config.
	printf 'version = 2\n' >"$host/etc/containerd/config.toml"
	log_run env DRY_RUN=1 HOST="$host" PAYLOAD="$pl" sh "$s"
	assert_success
	assert_eq "$(toml_get "$host/etc/containerd/config.toml" 'd["imports"]')" \
		'["/etc/containerd/conf.d/agentrun.toml"]' "imports added"
	rm "$host/etc/containerd/config.toml"
	log_run env DRY_RUN=1 HOST="$host" PAYLOAD="$pl" sh "$s"
	assert_success
	assert_eq "$(toml_get "$host/etc/containerd/config.toml" '[d["version"], d["imports"]]')" \
		'[2, ["/etc/containerd/conf.d/agentrun.toml"]]' "a new config"
}

@test "each engine has a how-to" {
	local e
	for e in docker podman containerd kubernetes; do
		[[ -s $CONTRIB/$e/README.md ]] || fail "no contrib/$e/README.md" || return
	done
}

@test "man page: renders without warnings" {
	command -v groff >/dev/null || skip "needs groff"
	log_run groff -man -ww -z "$CONTRIB/man/agentrun.8"
	assert_success
	[[ -z $output ]] || fail "groff warns: $output"
}

@test "man page: every command and global option of agentrun --help" {
	[[ -x $TOP_DIR/agentrun ]] || skip "agentrun is not built"
	local help page cmd opt missing=()
	help=$("$TOP_DIR/agentrun" --help)
	page=$(cat "$CONTRIB/man/agentrun.8")
	# commands: the lines after "commands:", "  NAME  description"
	for cmd in $(sed -n '/^commands:/,$ s/^  \([a-z][a-z-]*\) .*/\1/p' <<<"$help"); do
		grep -qx ".SS $cmd" <<<"$page" || missing+=("command $cmd")
	done
	# global options: "  --name ...", "  --name, -x ..."
	for opt in $(sed -n '/^global options:/,/^commands:/ s/^  --\([a-z-]*\).*/\1/p' <<<"$help"); do
		grep -qF -- "\\-\\-${opt//-/\\-}" <<<"$page" || missing+=("option --$opt")
	done
	((${#missing[@]} == 0)) || fail "not in contrib/man/agentrun.8: ${missing[*]}"
}
