# Docker's seccomp profile (Docker's own format) -> OCI linux.seccomp, as Docker itself would
# build it for a container on x86_64 with Docker's default capability set.
#
#   jq -f docker-seccomp.jq default.json
#
# Docker's rules (profiles/seccomp/seccomp_linux.go): an entry applies when every cap in
# includes.caps is in the set, no cap in excludes.caps is, the arch (Go's name, "amd64") is in
# includes.arches when that is set and not in excludes.arches, and the kernel is at least
# includes.minKernel (every minKernel in the profile is far below this host's kernel).

def docker_caps: [
  "CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_FSETID", "CAP_FOWNER", "CAP_MKNOD", "CAP_NET_RAW",
  "CAP_SETGID", "CAP_SETUID", "CAP_SETFCAP", "CAP_SETPCAP", "CAP_NET_BIND_SERVICE",
  "CAP_SYS_CHROOT", "CAP_KILL", "CAP_AUDIT_WRITE"
];
def arch_names: ["amd64", "x86_64", "SCMP_ARCH_X86_64"];
def has_any($xs; $set): any($xs[]; . as $x | $set | index([$x]) != null);
def has_all($xs; $set): all($xs[]; . as $x | $set | index([$x]) != null);

def applies:
  (.includes // {}) as $inc | (.excludes // {}) as $exc
  | ((($inc.caps // []) | length) == 0 or has_all($inc.caps; docker_caps))
  and ((($exc.caps // []) | length) == 0 or (has_any($exc.caps; docker_caps) | not))
  and ((($inc.arches // []) | length) == 0 or has_any($inc.arches; arch_names))
  and ((($exc.arches // []) | length) == 0 or (has_any($exc.arches; arch_names) | not));

def oci_rule:
  {names: (.names // [.name]), action: .action}
  + (if (.errnoRet // null) != null then {errnoRet: .errnoRet} else {} end)
  + (if ((.args // []) | length) > 0
     then {args: [.args[] | {index, value, op} + (if (.valueTwo // 0) != 0 then {valueTwo} else {} end)]}
     else {} end);

{
  defaultAction: .defaultAction,
  architectures: (
    [(.archMap // [])[] | select(.architecture == "SCMP_ARCH_X86_64")
     | [.architecture] + (.subArchitectures // [])] | first
    // ["SCMP_ARCH_X86_64", "SCMP_ARCH_X86", "SCMP_ARCH_X32"]),
  syscalls: [.syscalls[] | select(applies) | oci_rule]
}
+ (if (.defaultErrnoRet // null) != null then {defaultErrnoRet: .defaultErrnoRet} else {} end)
