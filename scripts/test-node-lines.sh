#!/usr/bin/env bash
# The unit and integration suites on the other Node lines (scripts/node-matrix.json: 22, 24),
# side by side: the suites mostly wait on sockets and child processes, so two lines at once take
# little longer than one. Each line's output goes to its own log, printed when it is done, with
# the Node version first and the line's "N passed, N failed" last. Exits 1 when any line fails
# (each line's vitest exit code is left in .node-lines/tests-VERSION.exit).
#   bash scripts/test-node-lines.sh               every line of scripts/node-matrix.json
#   bash scripts/test-node-lines.sh 24.21.0       just that one
#   NODE_LINE_WORKERS=2 bash scripts/test-node-lines.sh   two vitest workers per line (default 1:
#                       beside the system Node's run the 2 cores are already busy; 2 gave no gain)
# pnpm verify runs it alongside the system Node's run. The suites listed in node-matrix.json's
# "systemNodeOnly" (real browser, resilience, fuzz, volume, README type-check) stay on the system Node.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ $# -gt 0 ]; then lines=("$@"); else read -ra lines < <(node -p "require('./scripts/node-matrix.json').lines.join(' ')"); fi
only=$(node -p "require('./scripts/node-matrix.json').systemNodeOnly.join(', ')")
mkdir -p .node-lines
declare -A pid
for ver in "${lines[@]}"; do
  rm -f "test-results-node-v$ver.json" "test-results-node-v$ver-rerun.json"
  bash scripts/vitest-on.sh "$ver" "test-results-node-v$ver.json" --maxWorkers="${NODE_LINE_WORKERS:-1}" \
    >".node-lines/tests-$ver.log" 2>&1 &
  pid[$ver]=$!
done
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done' INT TERM
status=0
for ver in "${lines[@]}"; do
  printf '\n=== tests on node v%s: unit + integration (on the system Node only: %s)\n' "$ver" "$only"
  code=0
  wait "${pid[$ver]}" || code=$?
  # vitest's own exit code, for scripts/verify.sh: a run can fail with every test passing (an
  # unhandled error), and only failed tests are rerun.
  echo "$code" >".node-lines/tests-$ver.exit"
  [ "$code" -eq 0 ] || status=1
  cat ".node-lines/tests-$ver.log"
  node scripts/test-summary.mjs "node v$ver=test-results-node-v$ver.json"
done
exit $status
