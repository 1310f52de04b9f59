#!/bin/bash
# Run the integration suite: every tests/*.bats, or the files given.
#   tests/run-bats.sh                          all files, against ./agentrun
#   RUNTIME=runc tests/run-bats.sh tests/caps.bats
#   tests/run-bats.sh -f 'pid file' tests/pidfile.bats   (options go to bats)
# Prints TAP, then one summary line: `N passed, N failed, N skipped`.
# Exits 0 only if nothing failed.
set -uo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")

opts=()
files=()
while (($#)); do
	case $1 in
	-f | --filter | -j | --jobs | -F | --formatter | -o | --output | --filter-status | --report-formatter | --code-quote-style | --gather-test-outputs-in)
		opts+=("$1" "$2")
		shift 2
		;;
	-*)
		opts+=("$1")
		shift
		;;
	*)
		files+=("$1")
		shift
		;;
	esac
done
((${#files[@]})) || files=("$here"/*.bats "$here"/security/*.bats)

if [[ $EUID -ne 0 ]]; then
	echo "run-bats.sh: the integration tests need root" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
if ! command -v bats >/dev/null; then
	echo "run-bats.sh: bats is not installed (apt-get install bats)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
export RUNTIME=${RUNTIME:-$top/agentrun}
echo "# runtime: $RUNTIME" >&2

tap=$(mktemp)
trap 'rm -f "$tap"' EXIT
bats --tap "${opts[@]}" "${files[@]}" | tee "$tap"
bats_rc=${PIPESTATUS[0]}

passed=$(grep -cE '^ok ' "$tap" | head -1)
skipped=$(grep -cE '^ok .* # skip' "$tap" | head -1)
failed=$(grep -cE '^not ok ' "$tap" | head -1)
passed=$((passed - skipped))
planned=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' "$tap" | head -1)
# bats itself failed (syntax error, missing file) or stopped early: count it
if ((bats_rc != 0 && failed == 0)); then
	failed=1
fi
if [[ -n $planned ]] && ((passed + skipped + failed < planned)); then
	failed=$((failed + planned - passed - skipped - failed))
fi

summary="$passed passed, $failed failed"
((skipped == 0)) || summary+=", $skipped skipped"
echo "$summary"
((failed == 0))
