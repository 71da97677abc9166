// Test-matrix helper, preloaded on the other Node lines with
//   NODE_OPTIONS="--require <repo>/scripts/native-addons.cjs"
// node_modules holds native addons built for the system Node (20). When a process of another
// Node version loads one of them, this loads the build for that version from .node-lines/addons
// (made by scripts/node-lines.sh) instead. No product code knows about it; child processes
// inherit NODE_OPTIONS, so spawned collectors and bots get the same treatment.
// A missing build is left alone: Node's own "compiled against a different Node.js version"
// error then names the file.
const { existsSync, readFileSync } = require('node:fs')
const { basename, dirname, join } = require('node:path')

const cache = join(__dirname, '..', '.node-lines', 'addons')
const dlopen = process.dlopen

process.dlopen = function matrixDlopen(module, filename, ...rest) {
  const name = basename(String(filename), '.node')
  if (name === 'better_sqlite3') {
    const pkg = join(dirname(String(filename)), '..', '..', 'package.json')
    const version = existsSync(pkg) ? JSON.parse(readFileSync(pkg, 'utf8')).version : undefined
    const build = version && join(cache, `${name}-${version}-node-${process.version}.node`)
    if (build && existsSync(build)) return dlopen.call(this, module, build, ...rest)
  }
  return dlopen.call(this, module, filename, ...rest)
}
