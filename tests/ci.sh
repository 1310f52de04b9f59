#!/usr/bin/env bash
# Install what is needed, build, and run every test: the README's test command, and CI's.
# Run as root on Debian 12:   sudo tests/ci.sh
# Stages (each prints TAP or automake's summary): `make check` (C unit tests, fuzz regressions,
# fault injection, concurrency, exhaustion, a short soak), the bats suite, the engines (Docker,
# Podman, containerd), the real cgroup v2 check under qemu, 60 s of libFuzzer per parser under
# ASan+UBSan, and the whole bats suite again against an ASan+UBSan build.
# The last line is `N passed, N failed`.
# Set CI_SKIP="engines asan cgroupv2" (any subset) to leave stages out while developing.
set -uo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)
export DEBIAN_FRONTEND=noninteractive

deps=(build-essential autoconf automake libtool pkg-config libseccomp-dev libyajl-dev libcap-dev
	bats jq busybox-static runc crun iproute2 procps psmisc python3 git ca-certificates
	qemu-system-x86 linux-image-amd64 cpio docker.io podman containerd uidmap python3-yaml
	groff-base musl-tools clang libclang-rt-14-dev)

install_deps() {
	local missing=()
	for p in "${deps[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	((${#missing[@]} == 0)) && return 0
	echo "# installing: ${missing[*]}"
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

passed=0 failed=0 skipped=0
# stage NAME CMD...: run a stage, read its `N passed, N failed[, N skipped]` line.
stage() {
	local name=$1 log
	shift
	if [[ " ${CI_SKIP:-} " == *" $name "* ]]; then
		echo "# stage $name: left out by CI_SKIP"
		return
	fi
	echo "# ---- stage $name: $*"
	log=$(mktemp)
	"$@" 2>&1 | tee "$log"
	local rc=${PIPESTATUS[0]} line p f s
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$log" | tail -1)
	p=$(sed -nE 's/^([0-9]+) passed.*/\1/p' <<<"$line")
	f=$(sed -nE 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/p' <<<"$line")
	s=$(sed -nE 's/.* ([0-9]+) skipped.*/\1/p' <<<"$line")
	if [[ -z $line ]]; then # automake's summary
		p=$(sed -nE 's/^# PASS: +([0-9]+)/\1/p' "$log" | tail -1)
		f=$(awk '/^# (FAIL|ERROR|XPASS): /{n+=$3} END{print n+0}' "$log")
		s=$(sed -nE 's/^# SKIP: +([0-9]+)/\1/p' "$log" | tail -1)
	fi
	p=${p:-0} f=${f:-0} s=${s:-0}
	((rc != 0 && f == 0)) && f=1 # a stage that failed without saying how many
	echo "# stage $name: $p passed, $f failed, $s skipped (exit $rc)"
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
	rm -f "$log"
}

build() {
	./autogen.sh >/dev/null && ./configure -q && make -j"$(nproc)" >/dev/null
}

# The ASan+UBSan build lives in its own copy of the tree: a configured tree cannot host a
# second, out-of-tree build.  It also has the fault-injection points, so that its `make check`
# kills agentrun at each stage of create, start, exec and delete for real.
# (stages run in a subshell: the directory is chosen out here)
asan_dir=$(mktemp -d /tmp/agentrun-asan.XXXXXX)
asan_build() {
	git ls-files -z | xargs -0 cp --parents -t "$asan_dir" &&
		(cd "$asan_dir" && ./autogen.sh >/dev/null &&
			./configure -q --enable-asan --enable-fault-injection &&
			make -j"$(nproc)" >/dev/null && make check)
}

# Leaks are errors; the bats suite runs the ASan binary.
asan_suite() {
	[[ -x $asan_dir/agentrun ]] || { echo "no ASan build"; echo "0 passed, 1 failed"; return 1; }
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:exitcode=66 RUNTIME="$asan_dir/agentrun" \
		"$asan_dir/tests/run-bats.sh"
}

install_deps || { echo "0 passed, 1 failed"; exit 1; }
build || { echo "build failed"; echo "0 passed, 1 failed"; exit 1; }
stage unit make check
stage bats tests/run-bats.sh
stage engines tests/engines/run.sh
stage cgroupv2 make check-cgroupv2
stage fuzz make fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
stage asan-check asan_build
stage asan asan_suite
rm -rf "$asan_dir"
echo "$passed passed, $failed failed, $skipped skipped"
((failed == 0))
