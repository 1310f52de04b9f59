#!/bin/bash
# Undo setup.sh:  tests/engines/teardown.sh DIR
# Removes what the tests left in the engines, stops every daemon setup.sh
# started (by pid), and then checks that nothing is left behind: no process, no
# agentrun state, no cgroup, no mount and no network namespace.  Each leak is
# reported on stderr as "teardown: leaked ..." and then cleaned up anyway; the
# exit status is 1 if anything leaked or a daemon would not stop.
# ENG_KEEP=1 keeps DIR (logs, calls.log) for a look afterwards.
set -uo pipefail

dir=${1:?usage: teardown.sh DIR}
if [[ ! -f $dir/env ]]; then
	# setup.sh stopped before it started anything.
	[[ -n ${ENG_KEEP:-} || ! -d $dir ]] || rm -rf --one-file-system "$dir"
	exit 0
fi
# shellcheck disable=SC1091
. "$dir/env"
leaks=0

note() { echo "# teardown: $*" >&2; }
leak() {
	echo "teardown: leaked $*" >&2
	leaks=$((leaks + 1))
}

alive() { [[ -d /proc/$1 ]] && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# stop_pid PID NAME: SIGTERM, up to 30 s, then SIGKILL.
stop_pid() {
	local pid=$1 name=$2 n=150
	[[ -n $pid ]] && alive "$pid" || return 0
	kill -TERM "$pid" 2>/dev/null
	while ((n-- > 0)) && alive "$pid"; do sleep 0.2; done
	if alive "$pid"; then
		leak "$name (pid $pid) did not stop on SIGTERM in 30 s; killed"
		kill -KILL "$pid" 2>/dev/null
		sleep 0.5
	fi
}

# Processes whose command line names DIR: shims, conmon, agentrun, its monitors.
dir_pids() {
	local p
	for p in /proc/[0-9]*; do
		p=${p#/proc/}
		[[ $p != "$$" && $p != "$BASHPID" ]] || continue
		tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "$dir/" && echo "$p"
	done
}

cleanup_containers() {
	if [[ -n ${HAVE_DOCKER:-} ]] && alive "${DOCKERD_PID:-}"; then
		local ids
		mapfile -t ids < <(timeout 30 "$DOCKER" -H "$DOCKER_HOST" ps -aq 2>/dev/null)
		((${#ids[@]} == 0)) || timeout 60 "$DOCKER" -H "$DOCKER_HOST" rm -f "${ids[@]}" >/dev/null 2>&1
	fi
	if [[ -n ${HAVE_PODMAN:-} ]]; then
		CONTAINERS_CONF=$CONTAINERS_CONF CONTAINERS_STORAGE_CONF=$CONTAINERS_STORAGE_CONF \
			timeout 60 podman --root "$PODMAN_DIR/root" --runroot "$PODMAN_DIR/run" \
			--tmpdir "$PODMAN_DIR/tmp" rm -af -t 0 >/dev/null 2>&1
	fi
	if [[ -n ${CONTAINERD_PID:-} ]] && alive "$CONTAINERD_PID"; then
		local c t
		for t in $(timeout 10 ctr -a "$CTR_SOCK" task ls -q 2>/dev/null); do
			timeout 10 ctr -a "$CTR_SOCK" task kill -a -s KILL "$t" >/dev/null 2>&1
			timeout 20 ctr -a "$CTR_SOCK" task rm -f "$t" >/dev/null 2>&1
		done
		for c in $(timeout 10 ctr -a "$CTR_SOCK" container ls -q 2>/dev/null); do
			timeout 10 ctr -a "$CTR_SOCK" container rm "$c" >/dev/null 2>&1
		done
	fi
}

stop_daemons() {
	local cpid=
	[[ -f $dir/docker/exec/containerd/containerd.pid ]] && cpid=$(cat "$dir/docker/exec/containerd/containerd.pid")
	stop_pid "${DOCKERD_PID:-}" dockerd
	# dockerd stops the containerd it started; make sure of it.
	stop_pid "$cpid" "dockerd's containerd"
	stop_pid "${CONTAINERD_PID:-}" containerd
}

check_processes() {
	local n=25 p
	# Shims exit on their own once their last container is gone.
	while ((n-- > 0)) && [[ -n $(dir_pids) ]]; do sleep 0.2; done
	for p in $(dir_pids); do
		leak "process $p: $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | cut -c1-200)"
		kill -KILL "$p" 2>/dev/null
	done
}

# agentrun's state roots the engines used.  Podman calls agentrun without --root,
# so its containers are under the default root: only those with a bundle in DIR.
check_state() {
	local root s id
	for root in "$dir"/docker/exec/runtime-*/moby "$dir"/containerd/runc/*; do
		[[ -d $root ]] || continue
		for s in "$root"/*/; do
			[[ -d $s ]] || continue
			leak "agentrun state $s"
			"$AGENTRUN" --root "$root" delete --force "$(basename "$s")" >/dev/null 2>&1
		done
	done
	for s in /run/agentrun/*/state.json; do
		if [[ ! -f $s ]] || ! grep -qF "\"$dir/" "$s"; then
			continue
		fi
		id=$(basename "$(dirname "$s")")
		leak "agentrun state /run/agentrun/$id"
		"$AGENTRUN" delete --force "$id" >/dev/null 2>&1
	done
}

# Every cgroup named $CGPARENT, in every hierarchy, nested or not.
check_cgroups() {
	local mnt d sub p
	while read -r mnt; do
		while read -r d; do
			[[ -n $d ]] || continue
			while read -r sub; do
				[[ -n $sub && $sub != "$d" ]] || continue
				leak "cgroup $sub"
				while read -r p; do kill -KILL "$p" 2>/dev/null; done <"$sub/cgroup.procs"
			done < <(find "$d" -mindepth 1 -type d 2>/dev/null | sort -r)
			sleep 0.1
			find "$d" -depth -type d -exec rmdir {} + 2>/dev/null
			[[ ! -d $d ]] || leak "cgroup $d (cannot remove)"
		done < <(find "$mnt" -maxdepth 4 -type d -name "$CGPARENT" 2>/dev/null)
	done < <(awk '$9 == "cgroup" || $9 == "cgroup2" {print $5}' /proc/self/mountinfo | sort -u)
}

# Mount points under DIR.  The engines bind their own storage dirs onto
# themselves while they run; anything else (a container's rootfs, a netns bind
# mount under docker/exec/netns, shm) is a leak.
dir_mounts() {
	awk -v d="$dir/" 'index($5, d) == 1 {print $5}' /proc/self/mountinfo | sort -r -u
}

check_mounts() {
	local m
	for m in $(dir_mounts); do
		case $m in
		"$dir/docker/root" | "$dir/podman/root/overlay" | "$dir/containerd/root/"*snapshotter*) ;;
		*) leak "mount $m ($(awk -v m="$m" '$5 == m {print $9; exit}' /proc/self/mountinfo))" ;;
		esac
		umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	m=$(dir_mounts)
	[[ -z $m ]] || leak "mounts that do not unmount: $m"
}

cleanup_containers
stop_daemons
check_processes
check_state
check_cgroups
check_mounts
note "calls made by the engines: $(grep -c ' argv: ' "$dir/calls.log" 2>/dev/null)"
if [[ -n ${ENG_KEEP:-} ]]; then
	note "kept $dir"
elif [[ -z $(dir_mounts) ]]; then
	rm -rf --one-file-system "$dir"
fi
((leaks == 0))
