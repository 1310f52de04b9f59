#!/usr/bin/env bats
# Every control of the default host policy, proven from inside the job by the static probe,
# under two caller configs: `agentrun spec` (default) and a `docker run --privileged`-lite one
# (weak: host network, writable rootfs, Docker's caps + SYS_ADMIN, no seccomp, no limits, no
# masked paths, writable /sys).  Both must come out hardened, one test per check per config.

load helpers-security

# ---- the rootfs write fails, and /tmp works --------------------------------------------------

@test "default config: the rootfs is read-only and /tmp works" {
	probe_in default rootfs-ro
}

@test "weak config: the rootfs is read-only and /tmp works" {
	probe_in weak rootfs-ro
}

# ---- only lo, no route out, and a netns that is not the host's --------------------------------

@test "default config: only lo, no default route, a netns other than the host's" {
	probe_in default net "$HOST_NETNS"
}

@test "weak config (host network asked for): only lo, no default route, not the host's netns" {
	probe_in weak net "$HOST_NETNS"
	assert_output_contains "# interface 1: lo"
}

# ---- mount, unshare, bpf, keyctl, io_uring, perf, userfaultfd, ptrace, open_by_handle_at, -----
# ---- mknod of a block device, AF_PACKET and raw sockets, clone/setns: all EPERM ---------------

@test "default config: the denied syscalls fail with EPERM" {
	probe_in default denied
}

@test "weak config: the denied syscalls fail with EPERM" {
	probe_in weak denied
}

# ---- /proc/kcore and friends read empty --------------------------------------------------------

@test "default config: /proc/kcore and friends are masked" {
	probe_in default masked
}

@test "weak config: /proc/kcore and friends are masked" {
	probe_in weak masked
}

# ---- /proc/sys and /proc/sysrq-trigger cannot be written ----------------------------------------

@test "default config: /proc/sys and /proc/sysrq-trigger do not open for writing" {
	probe_in default procsys
}

@test "weak config: /proc/sys and /proc/sysrq-trigger do not open for writing" {
	probe_in weak procsys
}

# ---- the cgroup release_agent is unreachable --------------------------------------------------

@test "default config: no release_agent is reachable" {
	probe_in default release-agent
}

@test "weak config: no release_agent is reachable" {
	probe_in weak release-agent
}

# ---- NoNewPrivs 1, Seccomp 2, caps within the allowed set, no ambient -------------------------

@test "default config: NoNewPrivs, seccomp filter mode, capabilities within the allowed set" {
	probe_in default status
}

@test "weak config: NoNewPrivs, seccomp filter mode, capabilities within the allowed set" {
	probe_in weak status
	assert_output_contains "# NoNewPrivs: 1"
	assert_output_contains "# CapAmb: 0000000000000000"
}

# ---- no fd leaked (bats itself holds fd 3 and more), the cwd inside the rootfs ----------------

@test "default config: no leaked fd, cwd inside the rootfs" {
	probe_in default fds
}

@test "weak config: no leaked fd, cwd inside the rootfs" {
	probe_in weak fds
}

# ---- a fork bomb stops at the pids limit; the host is unaffected -------------------------------

# forkbomb_in CONFIG LIMIT: the bomb stops below LIMIT with EAGAIN, and the host still forks.
forkbomb_in() {
	probe_in "$1" forkbomb 4096
	local n
	n=$(sed -n 's/^# forked \([0-9]*\) processes.*/\1/p' <<<"$output")
	[[ -n $n ]] && ((n < $2)) || fail "forked '$n' processes, the limit is $2"
	run /bin/true
	assert_status 0
}

@test "default config: a fork bomb stops at the host policy's pids default" {
	write_policy '{"defaults": {"pids": 64}}'
	forkbomb_in default 64
}

@test "weak config: a fork bomb stops at the host policy's pids default" {
	write_policy '{"defaults": {"pids": 64}}'
	forkbomb_in weak 64
}

@test "weak config: a fork bomb stops at the compiled-in pids default (512)" {
	forkbomb_in weak 512
}

# ---- no host path is visible --------------------------------------------------------------------

@test "default config: no host path is visible" {
	probe_in default hostpaths "$TMP" "$AR_ROOT" "$BUNDLE"
}

@test "weak config: no host path is visible" {
	probe_in weak hostpaths "$TMP" "$AR_ROOT" "$BUNDLE"
}

# ---- beyond the probe: what a writable kernel interface would give away -------------------------

# A writable /sys or cgroup mount lets the job lift its own pids.max and memory limit, or write
# host-wide knobs (/sys/power/state); a second procfs is /proc/sys without the readonly paths.
# Only opens are tried, never a write that could succeed.
kernel_mounts_in() {
	write_config "$1"
	update_config '.mounts += [{destination: "/hp", type: "proc", source: "proc", options: ["rw"]}]'
	set_args sh -c '
		for f in /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/pids.max \
			/sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/memory.max \
			/sys/kernel/mm/transparent_hugepage/enabled /hp/sys/kernel/core_pattern; do
			[ -e "$f" ] || continue
			if (exec 3>>"$f") 2>/dev/null; then echo "WRITABLE $f"; else echo "ro $f"; fi
		done
		grep -E " /(sys|hp)[ /]" /proc/self/mountinfo | while read -r _ _ _ _ mnt opts _; do
			case ",$opts," in *,ro,*) ;; *) echo "WRITABLE mount $mnt ($opts)" ;; esac
		done'
	ar run "$CID"
	assert_status 0
	assert_output_contains "ro /hp/sys/kernel/core_pattern"
	assert_output_not_contains "WRITABLE"
}

@test "default config: sysfs, cgroup and a second procfs are read-only" {
	kernel_mounts_in default
}

@test "weak config: sysfs, cgroup and a second procfs are read-only" {
	kernel_mounts_in weak
}

# ---- the host's processes are out of reach -------------------------------------------------------

@test "weak config without pid/ipc/uts namespaces: the job sees only its own processes" {
	write_config weak
	update_config '.linux.namespaces = [{type: "mount"}]'
	set_args sh -c 'ls -d /proc/[0-9]* | wc -l; for n in pid ipc uts; do readlink /proc/self/ns/$n; done'
	ar run "$CID"
	assert_status 0
	local n
	n=$(head -1 <<<"$output")
	((n <= 3)) || fail "the job sees $n processes"
	local ns
	for ns in pid ipc uts; do
		assert_output_not_contains "$(readlink /proc/self/ns/$ns)"
	done
}

# ---- exec gets the same box as the init ----------------------------------------------------------

@test "weak config: exec runs in the job's netns, not the host's" {
	write_config weak
	set_args sleep 60
	ar_bg_ok run -d "$CID"
	ar exec "$CID" probe net "$HOST_NETNS"
	assert_status 0
}

@test "default config: exec --cap and exec --process get no capability beyond the allowed set" {
	write_config default
	set_args sleep 60
	ar_bg_ok run -d "$CID"
	ar exec --cap CAP_SYS_ADMIN --cap CAP_SYS_PTRACE "$CID" probe status
	assert_status 0
	jq -n --argjson c '["CAP_SYS_ADMIN","CAP_SYS_PTRACE","CAP_KILL"]' '{
		args: ["probe", "status"], cwd: "/", user: {uid: 0, gid: 0},
		capabilities: {bounding: $c, effective: $c, permitted: $c, ambient: $c}}' >"$TMP/process.json"
	ar exec --process "$TMP/process.json" "$CID"
	assert_status 0
}

# ---- seccomp: the agent filter is stacked on the caller's, the strictest answer wins -------------

@test "a caller's seccomp filter stays, with the agent filter stacked on it" {
	write_config default
	update_config '.linux.seccomp = {defaultAction: "SCMP_ACT_ALLOW", architectures: ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"],
		syscalls: [{names: ["chmod", "fchmod", "fchmodat", "fchmodat2"], action: "SCMP_ACT_ERRNO", errnoRet: 13},
			{names: ["mount", "unshare"], action: "SCMP_ACT_ALLOW"}]}'
	set_args sh -c 'touch /tmp/f; chmod 600 /tmp/f || echo chmod-denied; grep "^Seccomp_filters:" /proc/self/status; probe denied'
	ar run "$CID"
	assert_status 0
	assert_output_contains "chmod-denied"
	assert_output_contains "Seccomp_filters:	2"
	assert_output_contains "ok denied"
}

# ---- the 32-bit entry points do not bypass the filter ----------------------------------------

# abi_in CONFIG: unshare(CLONE_NEWUSER) and mount through int 0x80 (i386) and the x32 numbers.
abi_in() {
	[[ $(uname -m) == x86_64 ]] || skip "x86_64 only"
	command -v gcc >/dev/null || skip "needs gcc"
	cat >"$TMP/abi.c" <<-'EOF'
		#include <errno.h>
		#include <stdio.h>
		#include <unistd.h>
		static long i386_call(long nr, long a, long b, long c, long d)
		{
			long r;
			__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c), "S"(d) : "memory");
			return r;
		}
		int main(void)
		{
			static const char src[] = "none", dst[] = "/tmp", fs[] = "tmpfs";
			long r = syscall(0x40000000L | 272, 0x10000000L);
			printf("i386 unshare %ld\n", i386_call(310, 0x10000000L, 0, 0, 0));
			printf("i386 mount %ld\n", i386_call(21, (long)src, (long)dst, (long)fs, 0));
			printf("x32 unshare %d\n", r < 0 ? errno : 0);
			return 0;
		}
	EOF
	gcc -static -O1 -no-pie -o "$BUNDLE/rootfs/bin/abi" "$TMP/abi.c" || skip "cannot build a static x86_64 binary"
	write_config "$1"
	set_args abi
	ar run "$CID"
	assert_status 0
	assert_output_contains "i386 unshare -1"
	assert_output_contains "i386 mount -1"
	[[ $output == *"x32 unshare 1"* || $output == *"x32 unshare 38"* ]] ||
		fail "x32 unshare: expected EPERM (or ENOSYS without x32): $output"
}

@test "default config: i386 and x32 syscalls meet the filter too" {
	abi_in default
}

@test "weak config: i386 and x32 syscalls meet the filter too" {
	abi_in weak
}
