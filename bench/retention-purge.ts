/**
 * The retention's purge (D37) under a read load: `--expired` access-log entries older than the
 * retention are put in the log, then reads by id run first without the purge and then while
 * the service purges them at the pace of `--batch` and `--pause`, window after window until the
 * log holds none: every read's status and the p99 of each phase, side by side in one run.
 *
 * Usage: `flock /tmp/bench.lock node dist/bench/retention-purge.js [--database-url URL]
 *   [--rows 100000] [--expired 1000000] [--batch 1000] [--pause 10]`; SQLite (a temporary file,
 *   writer thread) without `--database-url`, else PostgreSQL in a schema of its own, dropped after.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { AccessLogRetention, createBeneficiaryService, systemClock } from '../core/index.js'
import type { Storage } from '../core/ports/storage.js'
import { DAY_MS } from '../core/time.js'
import { nodeSha256 } from '../server/node-sha256.js'
import { fakeBeneficiaries } from '../server/cli/fake-beneficiaries.js'
import { startServer } from '../server/start-server.js'
import { ProcessGroup } from './process-group.js'
import { ensureWrk, runWrk, type WrkResult } from './wrk-runner.js'

const { values } = parseArgs({
  options: {
    'database-url': { type: 'string' },
    rows: { type: 'string', default: '100000' },
    expired: { type: 'string', default: '1000000' },
    batch: { type: 'string', default: '1000' },
    pause: { type: 'string', default: '10' },
    window: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
  },
})
const rows = Number(values.rows)
const expired = Number(values.expired)
const batchSize = Number(values.batch)
const pauseMs = Number(values.pause)
const windowSeconds = Number(values.window)
const connections = Number(values.connections)
const url = values['database-url']
const UNLIMITED = { auth: 1_000_000, write: 1_000_000, standard: 1_000_000 }
const wrkDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'wrk')
const old = Date.now() - 500 * DAY_MS

ensureWrk()
const group = new ProcessGroup()
const dir = mkdtempSync(join(tmpdir(), 'retention-bench-'))
const schema = `bench_retention_${process.pid}`
let storage: Storage & { accessLog: NonNullable<Storage['accessLog']> }
let drop = async (): Promise<void> => undefined
if (url === undefined) {
  const sqlite = await import('../adapters/sqlite/index.js')
  const opened = await sqlite.openSqliteStorage({ path: join(dir, 'bench.db'), writer: 'thread' })
  await sqlite.seedBeneficiaries(opened, fakeBeneficiaries({ count: rows, seed: 7 }))
  opened.database.exec(`
    WITH RECURSIVE n(x) AS (SELECT 0 UNION ALL SELECT x + 1 FROM n WHERE x + 1 < ${expired})
    INSERT INTO access_log (at, client_id, request_id, operation, purpose, beneficiary_ids)
      SELECT ${old} + x, 'cl_old', 'old-' || x, 'get', NULL, '[' || (x % ${rows} + 1) || ']'
      FROM n;
    INSERT INTO access_log_records (beneficiary_id, at, entry_id)
      SELECT id % ${rows} + 1, at, id FROM access_log WHERE client_id = 'cl_old';`)
  storage = opened
} else {
  const postgres = await import('../adapters/postgres/index.js')
  const opened = await postgres.openPostgresStorage({ connectionString: url, schema })
  await postgres.seedPostgres(opened, fakeBeneficiaries({ count: rows, seed: 7 }))
  await opened.pool.query({
    text: `WITH e AS (
        INSERT INTO "${schema}".access_log
          (at, client_id, request_id, operation, purpose, beneficiary_ids)
        SELECT ${old} + x, 'cl_old', 'old-' || x, 'get', NULL, '[' || (x % ${rows} + 1) || ']'
        FROM generate_series(0, ${expired - 1}) AS x
        RETURNING id, at)
      INSERT INTO "${schema}".access_log_records (beneficiary_id, at, entry_id)
        SELECT id % ${rows} + 1, at, id FROM e`,
  })
  await opened.pool.query({ text: `VACUUM ANALYZE "${schema}".access_log` })
  storage = opened
  drop = async () => {
    const again = await postgres.openPostgresStorage({ connectionString: url, migrate: false })
    await again.pool.query({ text: `DROP SCHEMA "${schema}" CASCADE` })
    await again.close()
  }
}
try {
  const service = await createBeneficiaryService({ storage, limits: UNLIMITED, sha256: nodeSha256 })
  const client = await service.clients.create({ name: 'bench', scopes: ['read'] })
  const token = (await service.login({ ip: '127.0.0.1' }, client)).value.access_token
  const server = await startServer({ service, host: '127.0.0.1', port: 0 })
  const reads = (): Promise<WrkResult> =>
    runWrk(group, {
      script: join(wrkDir, 'get-by-id.lua'),
      baseUrl: server.url,
      connections,
      durationSeconds: windowSeconds,
      core: 1,
      env: { BENCH_LUA_DIR: wrkDir, BENCH_TOKEN: token, BENCH_MAX_ID: String(rows) },
    })
  const line = (label: string, result: WrkResult): string =>
    `${label}: ${Math.round(result.requests / (result.duration_us / 1e6))} req/s, p50 ${(result.p50_us / 1000).toFixed(2)} ms, p99 ${(result.p99_us / 1000).toFixed(2)} ms, errors ${result.non2xx + result.timeouts + result.read_errors + result.connect_errors}`
  const left = async () =>
    (await storage.accessLog.scan({ before: old + expired, limit: 1 })).length
  console.log(
    `${url === undefined ? 'SQLite' : 'PostgreSQL'}: ${rows} records, ${expired} expired entries`,
  )
  console.log(line('reads without the purge', await reads()))
  const retention = new AccessLogRetention(storage.accessLog, systemClock, {
    batchSize,
    pauseMs,
  })
  const started = performance.now()
  retention.start()
  for (let window = 1; (await left()) > 0 || window === 1; window++) {
    console.log(line(`reads during the purge, window ${window}`, await reads()))
  }
  const seconds = (performance.now() - started) / 1000
  await retention.stop()
  console.log(
    `purged ${retention.purged} entries in ${seconds.toFixed(1)} s (${Math.round(retention.purged / seconds)}/s; batch ${batchSize}, pause ${pauseMs} ms)`,
  )
  console.log(line('reads after the purge', await reads()))
  await server.close(1000)
} finally {
  await storage.close()
  await drop()
  rmSync(dir, { recursive: true, force: true })
}
