#!/usr/bin/env bash
# The whole check, as CI runs it: lint, typecheck, build, package quality, API docs, tests.
# Usage: pnpm verify   (after pnpm install)
set -euo pipefail
cd "$(dirname "$0")/.."
step() { printf '\n=== %s\n' "$*"; }

step "system programs (redis-server, chromium)"
bash scripts/ensure-system-deps.sh

step "lint + format (biome)"
npx biome check .

step "typecheck (tsc, strict)"
npx tsc -p tsconfig.json --noEmit

step "build (tsup: ESM + CJS + d.ts)"
pnpm -r --filter "./packages/**" build

step "package quality (publint + arethetypeswrong)"
node scripts/package-quality.mjs

step "release dry run (changeset version + publish --dry-run, in a throwaway copy)"
bash scripts/release-check.sh

step "API reference (typedoc → docs/api)"
npx typedoc --logLevel Warn --treatWarningsAsErrors

step "tests (vitest)"
status=0
npx vitest run --reporter=default --reporter=json --outputFile.json=test-results.json || status=$?
node scripts/test-summary.mjs test-results.json
exit $status
