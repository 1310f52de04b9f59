#!/bin/bash
# Start the engines for the engine tests, each with a config of its own in DIR:
#   tests/engines/setup.sh DIR [docker] [podman] [containerd]
# (no engine named: all three).  Nothing outside DIR is configured: dockerd and
# containerd get their own root, state and socket, Podman its own storage; the
# containers' cgroups nest under this process's own cgroup.
#
# The runtime configs are contrib/'s snippets as they are, with only their
# paths replaced: /usr/local/bin/agentrun by a tracing wrapper around
# $AGENTRUN (default: ./agentrun at the top of the tree), /etc/agentrun/policy.json
# by a test policy (hardening on, audit log in DIR/audit).
#
# Writes DIR/env (sourced by lib.bash and teardown.sh), with each daemon's pid
# (DOCKERD_PID, CONTAINERD_PID) for teardown.sh to stop it by.  An engine that
# is not installed is left out (its tests skip); one that does not start gets
# <ENGINE>_FAILED in DIR/env (its tests fail) and makes the exit status 1.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
dir=${1:?usage: setup.sh DIR [docker] [podman] [containerd]}
shift
engines=("$@")
((${#engines[@]})) || engines=(docker podman containerd)
AGENTRUN=${AGENTRUN:-$top/agentrun}
BUSYBOX=${BUSYBOX:-/bin/busybox}
DOCKER=${DOCKER:-docker}
# Installed paths as written in contrib/'s snippets.
SNIPPET_BIN=/usr/local/bin/agentrun
SNIPPET_POLICY=/etc/agentrun/policy.json
SNIPPET_CTR_ROOT=/run/containerd/agentrun

die() {
	echo "setup.sh: $*" >&2
	exit 1
}

# The end of a daemon's log, when it did not come up.
show_log() {
	echo "--- $1 (last 30 lines)" >&2
	tail -n 30 "$1" >&2
}

# wait_until SECONDS CMD...: poll CMD every 0.2 s.
wait_until() {
	local n=$(($1 * 5))
	shift
	while ((n-- > 0)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}

# The test's own copy of a contrib/ snippet, with the test's paths.
template() {
	sed -e "s|$SNIPPET_BIN|$dir/bin/agentrun|g" -e "s|$SNIPPET_POLICY|$dir/policy.json|g" \
		-e "s|$SNIPPET_CTR_ROOT|$dir/containerd/runc|g" "$1"
}

# spawn LOG CMD...: start a daemon in the background, its stdio in LOG, and no
# other inherited descriptor (a pipe of bats' would keep bats waiting for the
# daemon to exit).  Sets SPAWNED to its pid.
spawn() {
	local log=$1
	shift
	(
		for fd in "/proc/$BASHPID/fd/"*; do
			fd=${fd##*/}
			((fd <= 2)) || eval "exec $fd>&-"
		done
		exec "$@" </dev/null >"$log" 2>&1
	) &
	SPAWNED=$!
}

env_add() {
	printf '%s=%q\n' "$1" "$2" >>"$dir/env"
}

common() {
	[[ -x $AGENTRUN ]] || die "no runtime binary at $AGENTRUN (build it, or set AGENTRUN)"
	mkdir -p "$dir/bin" "$dir/audit" "$dir/rootfs/bin" || die "cannot create $dir"
	: >"$dir/env"
	: >"$dir/calls.log"
	# A copy of the binaries (agentrun finds agentrun-monitor beside itself), so that
	# a rebuild of the tree during the run does not pull them away under the engines.
	mkdir -p "$dir/libexec"
	cp "$AGENTRUN" "$dir/libexec/agentrun" || die "cannot copy $AGENTRUN"
	if [[ -x $(dirname "$AGENTRUN")/agentrun-monitor ]]; then
		cp "$(dirname "$AGENTRUN")/agentrun-monitor" "$dir/libexec/" || die "cannot copy agentrun-monitor"
	fi
	sed -e "s|@AGENTRUN@|$dir/libexec/agentrun|" -e "s|@LOG@|$dir/calls.log|" \
		"$here/trace-runtime.sh" >"$dir/bin/agentrun"
	chmod 755 "$dir/bin/agentrun"
	# The engines run containers hardened as agentrun's default policy says; only the
	# audit log moves into the test's dir.
	jq --arg d "$dir/audit" '.audit.dir = $d' "$top/contrib/policy/default.json" \
		>"$dir/policy.json" || die "cannot write the test policy"

	# The image: busybox and its links, nothing else (no registry is reachable).
	cp "$BUSYBOX" "$dir/rootfs/bin/busybox" || die "no busybox at $BUSYBOX"
	local c
	for c in sh echo cat sleep true false ls tty id ps grep head tr wc; do
		ln -s busybox "$dir/rootfs/bin/$c"
	done
	tar -C "$dir/rootfs" -cf "$dir/rootfs.tar" . || die "cannot make the rootfs tarball"

	# Each test run nests its containers' cgroups under one parent of its own,
	# relative to the engine's (our) cgroup; teardown.sh removes it.
	env_add ENG_DIR "$dir"
	env_add AGENTRUN "$dir/libexec/agentrun"
	env_add CGPARENT "ar-engines-$(basename "$dir" | tr -c 'a-zA-Z0-9\n' -)"
	env_add AUDIT_DIR "$dir/audit"
	env_add CALLS "$dir/calls.log"
	env_add IMAGE_DOCKER bb:test
	env_add IMAGE_PODMAN localhost/bb:test
	env_add IMAGE_CTR docker.io/library/bb:test
}

start_docker() {
	local d=$dir/docker
	if ! command -v dockerd >/dev/null || ! command -v "$DOCKER" >/dev/null; then
		echo "setup.sh: docker: not installed, its tests skip" >&2
		return 0
	fi
	mkdir -p "$d"
	# The daemon's own settings, then contrib/docker/daemon.json (runtimes.agentrun).
	# shellcheck disable=SC1091
	jq -n --arg d "$d" --arg cg "$(. "$dir/env" && echo "$CGPARENT")" '{
	    "data-root": "\($d)/root", "exec-root": "\($d)/exec", "pidfile": "\($d)/dockerd.pid",
	    "hosts": ["unix://\($d)/d.sock"], "storage-driver": "overlay2",
	    "iptables": false, "ip-forward": false, "ip-masq": false,
	    "bridge": "none", "cgroup-parent": $cg }' >"$d/base.json" || die "docker: jq"
	template "$top/contrib/docker/daemon.json" >"$d/snippet.json"
	jq -s '.[0] * .[1]' "$d/base.json" "$d/snippet.json" >"$d/daemon.json" || die "docker: bad daemon.json"
	spawn "$d/dockerd.log" dockerd --config-file "$d/daemon.json"
	env_add DOCKERD_PID "$SPAWNED"
	env_add DOCKER_HOST "unix://$d/d.sock"
	env_add DOCKER "$DOCKER"
	if ! wait_until 60 "$DOCKER" -H "unix://$d/d.sock" info; then
		show_log "$d/dockerd.log"
		die "dockerd did not come up"
	fi
	"$DOCKER" -H "unix://$d/d.sock" import "$dir/rootfs.tar" bb:test >/dev/null ||
		die "docker import failed"
	env_add HAVE_DOCKER 1
}

start_podman() {
	local d=$dir/podman
	if ! command -v podman >/dev/null; then
		echo "setup.sh: podman: not installed, its tests skip" >&2
		return 0
	fi
	mkdir -p "$d/root" "$d/run" "$d/tmp"
	# This machine's needs first (no systemd, no journald, hard nofile 20000, conmon
	# stays in our cgroup), then contrib/podman/containers.conf.  Its [engine] table
	# gets two more keys, so they go right after its header.
	{
		printf '[containers]\ncgroups = "no-conmon"\n'
		printf 'default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]\n\n'
		template "$top/contrib/podman/containers.conf" |
			sed -e 's|^\[engine\]$|[engine]\ncgroup_manager = "cgroupfs"\nevents_logger = "file"|'
	} >"$d/containers.conf"
	grep -q '^cgroup_manager' "$d/containers.conf" || die "podman: the snippet has no [engine] table"
	printf '[storage]\ndriver = "overlay"\ngraphroot = "%s"\nrunroot = "%s"\n' \
		"$d/root" "$d/run" >"$d/storage.conf"
	env_add CONTAINERS_CONF "$d/containers.conf"
	env_add CONTAINERS_STORAGE_CONF "$d/storage.conf"
	env_add PODMAN_DIR "$d"
	CONTAINERS_CONF=$d/containers.conf CONTAINERS_STORAGE_CONF=$d/storage.conf \
		podman --root "$d/root" --runroot "$d/run" --tmpdir "$d/tmp" \
		import "$dir/rootfs.tar" localhost/bb:test >/dev/null 2>"$d/import.log" || {
		show_log "$d/import.log"
		die "podman import failed"
	}
	env_add HAVE_PODMAN 1
}

# docker_archive FILE: the image as `docker save` writes it (manifest.json, the
# image config, one layer), for when there is no dockerd to save it.
docker_archive() {
	local a=$dir/archive diff cfg
	mkdir -p "$a"
	cp "$dir/rootfs.tar" "$a/layer.tar"
	diff=$(sha256sum "$a/layer.tar" | cut -d' ' -f1)
	jq -n --arg diff "sha256:$diff" '{architecture: "amd64", os: "linux",
	    config: {Cmd: ["sh"]}, rootfs: {type: "layers", diff_ids: [$diff]}}' >"$a/config.json"
	cfg=$(sha256sum "$a/config.json" | cut -d' ' -f1)
	mv "$a/config.json" "$a/$cfg.json"
	jq -n --arg c "$cfg.json" '[{Config: $c, RepoTags: ["bb:test"], Layers: ["layer.tar"]}]' \
		>"$a/manifest.json"
	tar -C "$a" -cf "$1" manifest.json "$cfg.json" layer.tar
}

start_containerd() {
	local d=$dir/containerd
	if ! command -v containerd >/dev/null || ! command -v ctr >/dev/null; then
		echo "setup.sh: containerd: not installed, its tests skip" >&2
		return 0
	fi
	mkdir -p "$d/runc"
	template "$top/contrib/containerd/config.toml" >"$d/agentrun.toml"
	# contrib/containerd/config.toml is imported as is; the CRI plugin (which the
	# snippet configures) is disabled here, as there is no CNI and no kubelet.
	cat >"$d/config.toml" <<-EOF
		version = 2
		imports = ["$d/agentrun.toml"]
		root = "$d/root"
		state = "$d/state"
		disabled_plugins = ["io.containerd.grpc.v1.cri"]
		[grpc]
		  address = "$d/c.sock"
		[ttrpc]
		  address = "$d/c.ttrpc"
	EOF
	# For `containerd config dump`: the same with the CRI plugin on.
	grep -v '^disabled_plugins' "$d/config.toml" >"$d/config-cri.toml"
	# The shim inherits containerd's environment, and agentrun reads the policy from it.
	spawn "$d/containerd.log" env AGENTRUN_POLICY="$dir/policy.json" containerd --config "$d/config.toml"
	env_add CONTAINERD_PID "$SPAWNED"
	env_add CTR_SOCK "$d/c.sock"
	env_add CTR_RUNC_ROOT "$d/runc"
	env_add CTR_DIR "$d"
	if ! wait_until 30 ctr -a "$d/c.sock" version; then
		show_log "$d/containerd.log"
		die "containerd did not come up"
	fi
	# The image, as `docker save` writes it (or a hand-made archive of the same form).
	if ! [[ -S $dir/docker/d.sock ]] ||
		! "$DOCKER" -H "unix://$dir/docker/d.sock" save bb:test -o "$d/bb.tar" 2>/dev/null; then
		docker_archive "$d/bb.tar"
	fi
	[[ -s $d/bb.tar ]] || die "containerd: no image archive"
	ctr -a "$d/c.sock" image import "$d/bb.tar" >/dev/null || die "ctr image import failed"
	ctr -a "$d/c.sock" image ls -q | grep -qx docker.io/library/bb:test ||
		die "ctr: the imported image is not docker.io/library/bb:test"
	env_add HAVE_CONTAINERD 1
}

[[ $EUID -eq 0 ]] || die "the engine tests need root"
command -v jq >/dev/null || die "needs jq"
common
# One engine that does not come up does not keep the others from their tests:
# ENGINE_FAILED in the env makes that engine's tests fail (not skip).
rc=0
for e in "${engines[@]}"; do
	case $e in
	docker) (start_docker) ;;
	podman) (start_podman) ;;
	containerd) (start_containerd) ;;
	*) die "unknown engine '$e'" ;;
	esac
	# shellcheck disable=SC2181 # the case above is the command
	if (($? != 0)); then
		env_add "${e^^}_FAILED" "$e did not start: see above, and $dir/$e/"
		rc=1
	fi
done
exit $rc
