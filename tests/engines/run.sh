#!/bin/bash
# The engine tests: Docker, Podman and containerd launching containers through
# agentrun, plus the contrib/ config checks.
#   tests/engines/run.sh [--install] [bats files...]
# Starts the engines once (setup.sh), runs the bats files (default: all of
# tests/engines/*.bats), stops the engines and checks for leaks (teardown.sh),
# then prints the TAP and a final line: `N passed, N failed[, N skipped]`.
# Exits 0 only if nothing failed.  Needs root and ./agentrun built.
#   --install     apt-get install the engines and tools first (for CI)
#   AGENTRUN=...  the runtime binary (default: ./agentrun at the top of the tree)
#   ENG_KEEP=1    keep the scratch dir (daemon logs, calls.log) afterwards
#   ENG_SUITE_TIMEOUT=seconds   for the whole bats run (default 480)
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
PACKAGES=(docker.io podman containerd jq bats busybox-static python3 python3-yaml util-linux)

install=
files=()
for a; do
	case $a in
	--install) install=1 ;;
	-h | --help)
		sed -n '2,14s/^# \{0,1\}//p' "$0"
		exit 0
		;;
	*) files+=("$a") ;;
	esac
done
((${#files[@]})) || files=("$here"/*.bats)

bail() {
	echo "run.sh: $*" >&2
	echo "0 passed, 1 failed"
	exit 1
}

[[ $EUID -eq 0 ]] || bail "the engine tests need root"
if [[ -n $install ]]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y "${PACKAGES[@]}" >/dev/null ||
		{ apt-get update >/dev/null && apt-get install -y "${PACKAGES[@]}" >/dev/null; } ||
		bail "apt-get install ${PACKAGES[*]} failed"
fi
command -v bats >/dev/null || bail "bats is not installed (apt-get install bats, or run.sh --install)"
command -v jq >/dev/null || bail "jq is not installed"
export AGENTRUN=${AGENTRUN:-$top/agentrun}
[[ -x $AGENTRUN ]] || bail "no runtime at $AGENTRUN: build it first (./autogen.sh && ./configure && make)"

# Which engines the chosen files need.
engines=()
for f in "${files[@]}"; do
	case $(basename "$f") in
	docker.bats) engines+=(docker) ;;
	podman.bats) engines+=(podman) ;;
	containerd.bats) engines+=(containerd) ;;
	esac
done

export ENG_DIR
ENG_DIR=$(mktemp -d /tmp/ar-eng.XXXXXX)
tap=$ENG_DIR.tap
teardown_rc=0
torn=
teardown() {
	[[ -z $torn ]] || return 0
	torn=1
	"$here/teardown.sh" "$ENG_DIR" 2>"$ENG_DIR.teardown" || teardown_rc=1
	sed 's/^/# /' "$ENG_DIR.teardown" >&2
	rm -f "$ENG_DIR.teardown"
}
trap 'teardown; rm -f "$tap"' EXIT
trap 'exit 130' INT TERM

start=$SECONDS
if ((${#engines[@]})); then
	echo "# starting: ${engines[*]} (runtime $AGENTRUN)" >&2
	"$here/setup.sh" "$ENG_DIR" "${engines[@]}" 2>&1 | sed 's/^/# /' >&2
	echo "# engines up after $((SECONDS - start)) s" >&2
fi

timeout -k 10 "${ENG_SUITE_TIMEOUT:-480}" bats --tap "${files[@]}" | tee "$tap"
bats_rc=${PIPESTATUS[0]}
teardown

passed=$(grep -cE '^ok ' "$tap")
skipped=$(grep -cE '^ok .* # skip' "$tap")
failed=$(grep -cE '^not ok ' "$tap")
passed=$((passed - skipped))
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tap" | head -n 1)
if ((bats_rc == 124 || bats_rc == 137)); then
	echo "# run.sh: the suite hit ENG_SUITE_TIMEOUT (${ENG_SUITE_TIMEOUT:-480} s)" >&2
fi
# bats stopped early, or failed outside a test
if [[ -n $planned ]] && ((passed + skipped + failed < planned)); then
	failed=$((planned - passed - skipped))
elif ((bats_rc != 0 && failed == 0)); then
	failed=1
fi
if ((teardown_rc != 0)); then
	echo "not ok - teardown: the engines left something behind (see above)"
	failed=$((failed + 1))
fi
echo "# took $((SECONDS - start)) s" >&2
summary="$passed passed, $failed failed"
((skipped == 0)) || summary+=", $skipped skipped"
echo "$summary"
((failed == 0))
