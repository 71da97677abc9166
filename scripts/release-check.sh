#!/usr/bin/env bash
# Proves a release works from a clean checkout: `changeset version` consumes the changesets
# and bumps versions, then `pnpm -r publish --dry-run` packs every public package.
# Runs in a throwaway copy of the committed tree (plus the built dist/), never in place.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# pnpm: the one running this script (pnpm verify), else the pinned one via npx. The other tools
# run from node_modules/.bin: npx inside a pnpm script warns about every pnpm setting it sees.
pnpm_cmd=(npx -y pnpm@10.34.9)
[ -n "${npm_execpath:-}" ] && [[ "$npm_execpath" == *pnpm* ]] && pnpm_cmd=(node "$npm_execpath")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q "$root" "$tmp/repo"
cd "$tmp/repo"
for d in "$root"/packages/*/dist; do cp -r "$d" "${d#"$root"/}"; done
ln -s "$root/node_modules" node_modules
git -c user.email=ci@invalid -c user.name=ci commit -q --allow-empty -m "release check"
node_modules/.bin/changeset version >/dev/null
[ -z "$(ls .changeset/*.md 2>/dev/null | grep -v README)" ] || { echo "changesets left after version" >&2; exit 1; }
for p in packages/*/package.json; do node -e "const p=require('./$p'); if(p.version==='0.1.0') { console.error(p.name+' was not bumped'); process.exit(1) } console.log('  '+p.name+' '+p.version)"; done
# Workspace links for publish: an offline, script-free install from the local store.
rm node_modules
"${pnpm_cmd[@]}" install --offline --ignore-scripts --frozen-lockfile >/dev/null
out=$("${pnpm_cmd[@]}" -r --filter "./packages/**" publish --dry-run --no-git-checks 2>&1) || { echo "$out" >&2; exit 1; }
n=$(echo "$out" | grep -c "npm notice name:" || true)
echo "$out" | grep -E "npm notice (name|version):" | paste - - | sed "s/npm notice //g"
want=$(ls packages/*/package.json | wc -l)
[ "$n" -eq "$want" ] || { echo "expected $want packages in the publish dry run, got $n" >&2; exit 1; }
echo "release check passed"
