#!/bin/bash
# `make check`: every fuzz target for FUZZ_CHECK_SECONDS (default 3), in TAP; skipped when
# clang cannot build a libFuzzer binary.  The long runs are `make fuzz`.
top_srcdir=${srcdir:-$(cd "$(dirname "$0")/../.." && pwd)}
exec "$top_srcdir/tests/fuzz/run-fuzz.sh" --tap --srcdir "$top_srcdir" --builddir "$PWD" \
	--seconds "${FUZZ_CHECK_SECONDS:-3}"
