#!/usr/bin/env bash
# The unit and integration suites on the other Node lines (scripts/node-matrix.json: 22, 24, 26),
# side by side: the suites mostly wait on sockets and child processes, so the lines at once take
# little longer than one. The newest line (26) runs every unit and integration suite; the middle
# lines (node-matrix.json's "reducedLines": 22, 24) run the projects in "reducedProjects" only
# (core, collector, kik: the packages that sit right on Node's runtime) — the oldest (the system
# Node, 20) and the newest line run everything, so four lines cost CI no more time than three did.
# Each line's output goes to its own log, printed when it is done, with the Node version first and
# the line's "N passed, N failed" last. Exits 1 when any line fails (each line's vitest exit code
# is left in .node-lines/tests-VERSION.exit).
#   bash scripts/test-node-lines.sh               every line of scripts/node-matrix.json
#   bash scripts/test-node-lines.sh 26.10.0       just that one
#   NODE_LINE_FULL=1 bash scripts/test-node-lines.sh 22.23.3   a reduced line with every suite
#   NODE_LINE_WORKERS=2 bash scripts/test-node-lines.sh   two vitest workers per line (default 1:
#                       beside the system Node's run the 2 cores are already busy; 2 gave no gain)
# pnpm verify runs it alongside the system Node's run. The suites listed in node-matrix.json's
# "systemNodeOnly" (real browser, resilience, fuzz, volume, README type-check) stay on the system Node,
# but for those in "handedToLines", which the line they are handed to runs instead.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
if [ $# -gt 0 ]; then lines=("$@"); else read -ra lines < <(node -p "require('./scripts/node-matrix.json').lines.join(' ')"); fi
only=$(node -p "require('./scripts/node-matrix.json').systemNodeOnly.join(', ')")
reduced=$(node -p "require('./scripts/node-matrix.json').reducedLines.join(' ')")
projects=$(node -p "require('./scripts/node-matrix.json').reducedProjects.join(' ')")
handed=$(node -p "Object.keys(require('./scripts/node-matrix.json').handedToLines).join(' ')")
# What a line runs: "" (every unit and integration suite) or its --project flags.
# A reduced line also runs the project of the system-Node-only suites handed to it
# (node-matrix.json "handedToLines", vitest.config.ts's "handed" project).
scope() {
  if [ -z "${NODE_LINE_FULL:-}" ] && [[ " $reduced " == *" $1 "* ]]; then
    for p in $projects; do printf -- '--project=%s ' "$p"; done
    if [[ " $handed " == *" $1 "* ]]; then printf -- '--project=handed '; fi
  fi
}
mkdir -p .node-lines
declare -A pid
for ver in "${lines[@]}"; do
  rm -f "test-results-node-v$ver.json" "test-results-node-v$ver-rerun.json"
  # shellcheck disable=SC2046 # scope's flags are words of their own
  bash scripts/vitest-on.sh "$ver" "test-results-node-v$ver.json" --maxWorkers="${NODE_LINE_WORKERS:-1}" $(scope "$ver") \
    >".node-lines/tests-$ver.log" 2>&1 &
  pid[$ver]=$!
done
trap 'for p in "${pid[@]}"; do kill "$p" 2>/dev/null || true; done' INT TERM
status=0
for ver in "${lines[@]}"; do
  if [ -n "$(scope "$ver")" ]; then
    printf '\n=== tests on node v%s: the %s projects (a middle line: node-matrix.json "reducedLines")\n' "$ver" "$projects"
  else
    printf '\n=== tests on node v%s: unit + integration (on the system Node only: %s)\n' "$ver" "$only"
  fi
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
