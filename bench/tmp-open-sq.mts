import { SqliteRecordStore } from '../packages/collector/src/index'
const t = performance.now()
const s = new SqliteRecordStore('/var/tmp/new-1m.db')
await s.counts()
console.log('open (step 18) s', ((performance.now() - t) / 1000).toFixed(1))
await s.close()
