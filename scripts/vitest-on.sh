#!/usr/bin/env bash
# One vitest run on a given Node, its JSON report written to OUT:
#   bash scripts/vitest-on.sh system OUT [vitest args / test files …]    the system Node (every suite)
#   bash scripts/vitest-on.sh 22.23.3 OUT [vitest args / test files …]   a Node line of scripts/node-matrix.json
# On a Node line, that Node is first on the PATH: vitest, its workers and every child process the
# tests spawn (tsx, collectors, bots) run on it, and scripts/native-addons.cjs gives them its
# better-sqlite3 build; CONVOTRACK_NODE_LINE makes vitest.config.ts leave out the suites that run
# on the system Node only. Used by scripts/test-node-lines.sh and scripts/verify.sh (reruns).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
ver=$1 out=$2
shift 2
if [ "$ver" = system ]; then
  exec node node_modules/vitest/vitest.mjs run --reporter=default --reporter=json "--outputFile.json=$out" "$@"
fi
bin=$(bash scripts/node-lines.sh "$ver")
echo "node $("$bin/node" -v) at $bin"
PATH="$bin:$PATH" NODE_OPTIONS="--require $root/scripts/native-addons.cjs ${NODE_OPTIONS:-}" CONVOTRACK_NODE_LINE="$ver" \
  exec node node_modules/vitest/vitest.mjs run --reporter=default --reporter=json "--outputFile.json=$out" "$@"
