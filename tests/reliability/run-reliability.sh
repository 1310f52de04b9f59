#!/bin/bash
# The reliability suite in TAP (for `make check`): fault injection, concurrency, exhaustion and
# a short soak, or the .bats files named.  Needs root and bats; otherwise the whole suite skips
# and says why.  RUNTIME defaults to the agentrun of the build dir (the current dir).
#   tests/reliability/run-reliability.sh [FILE.bats...]
here=$(cd "$(dirname "$0")" && pwd)
files=()
for f in "$@"; do
	files+=("$here/$(basename "$f")")
done
((${#files[@]})) || files=("$here/fault.bats" "$here/concurrency.bats" "$here/exhaustion.bats"
	"$here/soak.bats")
if [[ $EUID -ne 0 ]]; then
	echo "1..0 # SKIP the reliability tests need root"
	exit 0
fi
if ! command -v bats >/dev/null || ! command -v jq >/dev/null; then
	echo "1..0 # SKIP the reliability tests need bats and jq"
	exit 0
fi
if [[ -z ${RUNTIME:-} ]]; then
	if [[ -x $PWD/agentrun ]]; then
		export RUNTIME=$PWD/agentrun
	else
		RUNTIME=$(cd "$here/../.." && pwd)/agentrun
		export RUNTIME
	fi
fi
echo "# runtime: $RUNTIME; fault injection build: ${AGENTRUN_FAULT_BIN:-$RUNTIME}"
exec bats --tap "${files[@]}"
