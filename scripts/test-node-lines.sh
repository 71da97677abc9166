#!/usr/bin/env bash
# The unit and integration suites on the other Node lines (scripts/node-matrix.json: 22, 24),
# side by side: the suites mostly wait on sockets and child processes, so two lines at once take
# little longer than one. Each line's output goes to its own log, printed when it is done, with
# the Node version first and the line's "N passed, N failed" last. Exits 1 when any line fails.
#   bash scripts/test-node-lines.sh               every line of scripts/node-matrix.json
#   bash scripts/test-node-lines.sh 24.21.0       just that one
#   NODE_LINE_WORKERS=2 bash scripts/test-node-lines.sh   two vitest workers per line (default 1:
#                       beside the system Node's run the 2 cores are already busy; 2 gave no gain)
# pnpm verify runs it alongside the system Node's run. The suites listed in node-matrix.json's
# "systemNodeOnly" (real browser, resilience harness, README type-check) stay on the system Node.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ $# -gt 0 ]; then lines=("$@"); else read -ra lines < <(node -p "require('./scripts/node-matrix.json').lines.join(' ')"); fi
only=$(node -p "require('./scripts/node-matrix.json').systemNodeOnly.join(', ')")
mkdir -p .node-lines
declare -A pid
for ver in "${lines[@]}"; do
  rm -f "test-results-node-v$ver.json"
  (
    bin=$(bash scripts/node-lines.sh "$ver") || exit 1
    echo "node $("$bin/node" -v) at $bin"
    # node first on the PATH: vitest, its workers and every child process the tests spawn (tsx,
    # collectors, bots) run on this Node; native-addons.cjs gives them its better-sqlite3 build.
    # CONVOTRACK_NODE_LINE: vitest.config.ts leaves out the system-Node-only suites.
    PATH="$bin:$PATH" NODE_OPTIONS="--require $root/scripts/native-addons.cjs ${NODE_OPTIONS:-}" \
      CONVOTRACK_NODE_LINE="$ver" node node_modules/vitest/vitest.mjs run --maxWorkers="${NODE_LINE_WORKERS:-1}" \
      --reporter=default --reporter=json "--outputFile.json=test-results-node-v$ver.json"
  ) >".node-lines/tests-$ver.log" 2>&1 &
  pid[$ver]=$!
done
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done' INT TERM
status=0
for ver in "${lines[@]}"; do
  printf '\n=== tests on node v%s: unit + integration (on the system Node only: %s)\n' "$ver" "$only"
  wait "${pid[$ver]}" || status=1
  cat ".node-lines/tests-$ver.log"
  node scripts/test-summary.mjs "node v$ver=test-results-node-v$ver.json"
done
exit $status
