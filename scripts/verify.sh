#!/usr/bin/env bash
# The whole check, as CI runs it: lint, typecheck, build, package quality, API docs, tests —
# every suite on the system Node (20), and beside it the unit and integration suites on the Node
# lines of scripts/node-matrix.json: all of them on 26, the core, collector and kik projects on the
# middle lines 22 and 24 (the browser, resilience, fuzz and volume suites and the collector's PostgreSQL logic
# run on the system Node only: scripts/node-matrix.json).
# Test files with a failed test run once more when everything else is done (see the end): a test
# that then passes is printed FLAKY by name, one that fails again fails verify.
# Usage: pnpm verify   (after pnpm install)
#   NODE_LINES="" pnpm verify         skips the other Node lines (a quicker local check)
#   NODE_LINES="26.10.0" pnpm verify  runs only those
# The tools are called directly (node_modules/.bin), never through npx: inside a pnpm script npx
# prints an "npm warn Unknown env config" line per pnpm setting.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export PATH="$root/node_modules/.bin:$PATH"
step() { printf '\n=== %s (%s)\n' "$*" "$(date +%T)"; }
# pnpm itself: the one running this script, else one on the PATH, else the pinned one via npx.
if [[ "${npm_execpath:-}" == *pnpm* ]]; then
  pnpm() { node "$npm_execpath" "$@"; }
elif ! command -v pnpm >/dev/null 2>&1; then
  pnpm() { npx -y pnpm@10.34.9 "$@"; }
fi
lines=${NODE_LINES-$(node -p "require('./scripts/node-matrix.json').lines.join(' ')")}

step "system programs (redis-server, chromium)"
bash scripts/ensure-system-deps.sh

# The other Node lines are fetched and their better-sqlite3 built in the background while the
# checks below run (cached in .node-lines/: instant on a second run).
mkdir -p .node-lines
declare -A prep_pid
for ver in $lines; do
  bash scripts/node-lines.sh "$ver" >".node-lines/prep-$ver.out" 2>&1 &
  prep_pid[$ver]=$!
done
# Stop what is still being prepared if a step below fails.
trap 'for p in "${prep_pid[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT

step "lint + format (biome)"
biome check .

step "import cycles (collector)"
node scripts/import-cycles.mjs packages/collector/src

step "build (tsup: ESM + CJS + d.ts)"
pnpm -r --filter "./packages/**" build

# The static checks need only the build: they run in the background, beside the tests (their
# output is printed after the tests; any failure fails verify). ~2.5 minutes off the wall clock.
step "typecheck, package quality, release dry run, API reference: in the background (printed after the tests)"
(
  set -e
  step "typecheck (tsc, strict)"
  tsc -p tsconfig.json --noEmit
  step "package quality (publint + arethetypeswrong)"
  node scripts/package-quality.mjs
  step "release dry run (changeset version + publish --dry-run, in a throwaway copy)"
  bash scripts/release-check.sh
  step "API reference (typedoc → docs/api)"
  typedoc --logLevel Warn --treatWarningsAsErrors
) >.node-lines/checks.out 2>&1 &
checks_pid=$!
prep_pid[checks]=$checks_pid

rm -f test-results*.json .node-lines/tests-*.exit
status=0
# Each run: "label=its JSON report=its Node" (system, or a line's version: .node-lines/tests-NODE.exit
# holds its vitest exit code).
runs=()

# The other Node lines run side by side with the system Node's run: the suites mostly wait on
# sockets, timers and child processes, so the runs together take little longer than the longest
# one (the middle lines run a reduced set: four lines cost what three full ones did). They start
# as soon as their Node and better-sqlite3 build are ready (a cold .node-lines/ takes ~2.5
# minutes); the system Node's run does not wait for that.
matrix_pid=
if [ -n "$lines" ]; then
  prep_pids="${prep_pid[*]}"
  (
    for p in $prep_pids; do
      [ "$p" = "$checks_pid" ] && continue
      while kill -0 "$p" 2>/dev/null; do sleep 1; done
    done
    bash scripts/test-node-lines.sh $lines
  ) >.node-lines/matrix.out 2>&1 &
  matrix_pid=$!
  prep_pid[matrix]=$matrix_pid
fi

step "tests on node $(node -v) (system Node): every suite (vitest)"
# Two workers: the suites mostly wait on sockets, timers and child processes, and vitest's
# default on 2 cores is one (the system Node's run was the longest pole: ~10 of ~12.5 minutes).
code=0
# The suites handed to the middle lines running beside it (node-matrix.json "handedToLines") are theirs.
CONVOTRACK_LINES_BESIDE="$lines" bash scripts/vitest-on.sh system test-results.json --maxWorkers=2 || code=$?
echo "$code" >.node-lines/tests-system.exit
node scripts/test-summary.mjs test-results.json
runs+=("node $(node -v)=test-results.json=system")

for ver in $lines; do runs+=("node v$ver=test-results-node-v$ver.json=$ver"); done
if [ -n "$matrix_pid" ]; then
  wait "$matrix_pid" || true # judged below, run by run
  cat .node-lines/matrix.out
fi

checks_status=0
wait "$checks_pid" || checks_status=1
cat .node-lines/checks.out
[ "$checks_status" -eq 0 ] || { echo "static checks FAILED (see above)"; status=1; }

# A run that failed: its failed test files once more, on the same Node, the machine now idle. A
# test that passes on the rerun counts as passed and is printed FLAKY by name (test-summary.mjs),
# so it gets fixed rather than hidden; one that fails again fails verify. A run whose vitest
# failed with no failed test (an unhandled error, a crash) is not rerun: it fails verify.
summary=()
for run in "${runs[@]}"; do
  IFS== read -r label json ver <<<"$run"
  summary+=("$label=$json")
  code=$(cat ".node-lines/tests-$ver.exit" 2>/dev/null || echo 1)
  [ "$code" -eq 0 ] && continue
  mapfile -t failed < <(node scripts/test-summary.mjs --failed-files "$json")
  if [ "${#failed[@]}" -eq 0 ]; then
    echo "$label: vitest exited with $code and no test failed (an unhandled error, or the run crashed or never started): see its output above"
    status=1
    continue
  fi
  step "$label: rerunning the ${#failed[@]} test file(s) that failed: ${failed[*]}"
  bash scripts/vitest-on.sh "$ver" "${json%.json}-rerun.json" --maxWorkers=2 "${failed[@]}" || {
    # Failed tests are judged by test-summary; an unhandled error on the rerun fails here.
    [ -n "$(node scripts/test-summary.mjs --failed-files "${json%.json}-rerun.json")" ] || status=1
  }
done

step "tests, all Node lines"
node scripts/test-summary.mjs --check "${summary[@]}" || status=1
exit $status
