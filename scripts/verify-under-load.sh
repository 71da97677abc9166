#!/usr/bin/env bash
# The machine-speed proof: runs `pnpm verify` (or any command) N times in a row with BURNERS CPU
# burners (busy loops, one process each) running the whole time, and says per run whether it
# passed, how long it took and how many tests were FLAKY (failed, then passed on verify's rerun).
# Passes only when every run exits 0 with zero FLAKY. The burners are stopped on exit, whatever
# happens. Each run's output is kept in .verify-under-load/run-N.log.
#   bash scripts/verify-under-load.sh            5 runs, 3 burners (issue 30's proof)
#   bash scripts/verify-under-load.sh 2 2        2 runs, 2 burners
#   VERIFY_CMD="npx vitest run packages/redis" bash scripts/verify-under-load.sh 5 3
#                                                any command instead of verify (e.g. a few suites)
set -uo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
burners=${2:-3}
cmd=${VERIFY_CMD:-bash scripts/verify.sh}
out=.verify-under-load
mkdir -p "$out"

burner_pids=()
run_pid=
stop_burners() {
  for p in "${burner_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  burner_pids=()
}
# Interrupted: the run in progress goes too (its own process group: vitest and its workers).
stop_run() { [ -n "$run_pid" ] && kill -- "-$run_pid" 2>/dev/null || true; }
trap stop_burners EXIT
trap 'stop_run; stop_burners; exit 130' INT TERM
for _ in $(seq 1 "$burners"); do
  bash -c 'while :; do :; done' &
  burner_pids+=($!)
done
echo "$burners CPU burner(s) running (pids ${burner_pids[*]:-none}) on $(nproc) core(s); $runs run(s) of: $cmd"

failed=0
summary=()
for i in $(seq 1 "$runs"); do
  log="$out/run-$i.log"
  start=$(date +%s)
  code=0
  setsid bash -c "$cmd" >"$log" 2>&1 &
  run_pid=$!
  wait "$run_pid" || code=$?
  run_pid=
  secs=$(($(date +%s) - start))
  flaky=$(grep -c '^FLAKY ' "$log" || true)
  last=$(grep -E '[0-9]+ passed' "$log" | tail -1 | sed 's/\x1b\[[0-9;]*m//g' | tr -s ' ')
  line="run $i/$runs: exit $code, ${secs}s, FLAKY $flaky${last:+ | $last}"
  echo "$line"
  summary+=("$line")
  if [ "$code" -ne 0 ] || [ "$flaky" -ne 0 ]; then failed=$((failed + 1)); fi
done
stop_burners

printf '\n=== %s run(s) under %s burner(s): %s passed, %s failed (logs in %s/)\n' \
  "$runs" "$burners" "$((runs - failed))" "$failed" "$out"
printf '%s\n' "${summary[@]}"
[ "$failed" -eq 0 ]
