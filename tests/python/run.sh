#!/bin/sh
# Run the tests of contrib/python/agentrun.py.  Prints unittest's report, then one summary
# line: `N passed, N failed` (`, N skipped` when some were).  Exits 0 only if nothing failed.
#   tests/python/run.sh                        against the agentrun at the top of the tree
#   AGENTRUN_BINARY=/usr/local/bin/agentrun tests/python/run.sh
here=$(cd "$(dirname "$0")" && pwd)
export PYTHONDONTWRITEBYTECODE=1 # keep the tree clean
exec "${PYTHON:-python3}" - "$here" <<'PY'
import sys
import unittest

here = sys.argv[1]
sys.path.insert(0, here)
suite = unittest.defaultTestLoader.discover(here, pattern="test_*.py", top_level_dir=here)
result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
failed = len(result.failures) + len(result.errors) + len(result.unexpectedSuccesses)
skipped = len(result.skipped)
passed = result.testsRun - failed - skipped
summary = "%d passed, %d failed" % (passed, failed)
if skipped:
    summary += ", %d skipped" % skipped
sys.stdout.flush()
print(summary)
sys.exit(1 if failed or result.testsRun == 0 else 0)
PY
