#!/bin/bash
# Stands in for agentrun in the engines' configs and records every call the
# engines make: argv, the stdin of `update` (its LinuxResources JSON) and the
# exit code, one line each, to $dir/calls.log.  Then it runs the real binary
# with the same argv, environment and file descriptors.
#   @AGENTRUN@  the real binary      @LOG@  the call log
# setup.sh fills these in when it copies this script into the test's dir.
real=@AGENTRUN@
log=@LOG@

rec() {
	# One write per line, so that concurrent calls do not interleave.
	printf '%s\n' "$*" >>"$log"
}

rec "$$ argv: $*"
# `update --resources -` reads LinuxResources from stdin; keep a copy (bounded).
if [[ " $* " == *" update "* && " $* " == *" --resources - "* ]]; then
	buf=$(head -c 65536)
	rec "$$ stdin: ${buf//$'\n'/ }"
	"$real" "$@" <<<"$buf"
else
	"$real" "$@"
fi
rc=$?
rec "$$ exit: $rc"
exit $rc
