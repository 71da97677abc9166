// Lists import cycles between the files of a source folder (type-only imports count too: a cycle of
// types is still two files that cannot be understood one without the other).
// Usage: node scripts/import-cycles.mjs packages/collector/src   (exit 1 when there is a cycle)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const root = resolve(process.argv[2] ?? 'packages/collector/src')
const files = []
const walk = (dir) => {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) walk(path)
    else if (path.endsWith('.ts')) files.push(path)
  }
}
walk(root)
const edges = new Map()
for (const file of files) {
  const text = readFileSync(file, 'utf8')
  const targets = new Set()
  for (const m of text.matchAll(/(?:from|import)\s*\(?\s*['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const base = resolve(dirname(file), m[1].replace(/\.(js|ts)$/, ''))
    const target = [`${base}.ts`, join(base, 'index.ts')].find((p) => existsSync(p))
    if (target) targets.add(target)
  }
  edges.set(file, [...targets])
}
// Tarjan's strongly connected components: every component with more than one file is a cycle.
let index = 0
const stack = []
const info = new Map()
const cycles = []
const connect = (v) => {
  info.set(v, { index, low: index, onStack: true })
  index++
  stack.push(v)
  for (const w of edges.get(v) ?? []) {
    if (!info.has(w)) {
      connect(w)
      info.get(v).low = Math.min(info.get(v).low, info.get(w).low)
    } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index)
  }
  if (info.get(v).low === info.get(v).index) {
    const component = []
    let w
    do {
      w = stack.pop()
      info.get(w).onStack = false
      component.push(relative(root, w))
    } while (w !== v)
    if (component.length > 1) cycles.push(component.sort())
  }
}
for (const file of files) if (!info.has(file)) connect(file)
for (const cycle of cycles) console.log(`cycle: ${cycle.join(' ↔ ')}`)
console.log(
  cycles.length
    ? `${cycles.length} import cycle(s) in ${relative(process.cwd(), root)}`
    : `no import cycles in ${relative(process.cwd(), root)} (${files.length} files)`,
)
process.exit(cycles.length ? 1 : 0)
