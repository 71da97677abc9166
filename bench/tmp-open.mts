import { PgRecordStore } from '../packages/collector/src/index'
const t = performance.now()
const s = await PgRecordStore.open('postgres://postgres@127.0.0.1:28878/scale', { listen: false })
console.log('open (migrations) s', ((performance.now() - t) / 1000).toFixed(1))
const DAY = 86_400_000
const mid = Math.floor(Date.now() / DAY) * DAY
for (const off of [5 * 3_600_000, 0]) {
  const q = { from: mid - 37 * DAY + off, to: mid - 7 * DAY + off, tz: 'UTC' }
  for (let i = 0; i < 3; i++) {
    const a = performance.now()
    const o = await s.overview(q)
    console.log(off, 'users', o.users, 'ms', (performance.now() - a).toFixed(0))
  }
}
await s.close()
