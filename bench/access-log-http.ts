/**
 * What the access log (D35) costs over HTTP: two servers in this process on one SQLite file,
 * its writes on the writer thread as `serve` opens it, one with the access log and one
 * without, measured one after the other with wrk (get by id and the first list page),
 * `--rounds` times, each keeping its median: the two columns of one run, to compare as ratios.
 *
 * Usage: `flock /tmp/bench.lock node dist/bench/access-log-http.js --rows 100000 --rounds 3`
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import { openSqliteStorage, seedBeneficiaries } from '../adapters/sqlite/index.js'
import { createBeneficiaryService } from '../core/index.js'
import { nodeSha256 } from '../server/node-sha256.js'
import { fakeBeneficiaries } from '../server/cli/fake-beneficiaries.js'
import { startServer } from '../server/start-server.js'
import { ProcessGroup } from './process-group.js'
import { ensureWrk, runWrk } from './wrk-runner.js'

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    duration: { type: 'string', default: '5' },
    connections: { type: 'string', default: '50' },
    transport: { type: 'string', default: 'uws' },
  },
})
const rows = Number(values.rows)
const rounds = Number(values.rounds)
const durationSeconds = Number(values.duration)
const connections = Number(values.connections)
const transport = values.transport === 'node' ? 'node' : 'uws'
const UNLIMITED = { auth: 1_000_000, write: 1_000_000, standard: 1_000_000 }
const wrkDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bench', 'wrk')

ensureWrk()
const dir = mkdtempSync(join(tmpdir(), 'access-log-bench-'))
const group = new ProcessGroup()
const storage = await openSqliteStorage({ path: join(dir, 'bench.db'), writer: 'thread' })
try {
  await seedBeneficiaries(storage, fakeBeneficiaries({ count: rows, seed: 7 }))
  const logged = await createBeneficiaryService({ storage, limits: UNLIMITED, sha256: nodeSha256 })
  const unlogged = await createBeneficiaryService({
    storage: {
      beneficiaries: storage.beneficiaries,
      clients: storage.clients,
      sessions: storage.sessions,
      signingKeys: storage.signingKeys,
      ping: () => storage.ping(),
      close: () => storage.close(),
    },
    limits: UNLIMITED,
    sha256: nodeSha256,
  })
  const client = await logged.clients.create({ name: 'bench', scopes: ['read'] })
  const token = (await logged.login({ ip: '127.0.0.1' }, client)).value.access_token
  const servers = {
    on: await startServer({ service: logged, transport, host: '127.0.0.1', port: 0 }),
    off: await startServer({ service: unlogged, transport, host: '127.0.0.1', port: 0 }),
  }
  const loads = {
    get: { script: 'get-by-id', env: { BENCH_MAX_ID: String(rows) } },
    list: { script: 'list', env: { BENCH_PATH: '/v3/beneficiaries' } },
  } as const
  const figures: Record<string, number[]> = {}
  for (let round = 0; round < rounds; round++) {
    for (const [load, { script, env }] of Object.entries(loads)) {
      for (const [log, server] of Object.entries(servers)) {
        const result = await runWrk(group, {
          script: join(wrkDir, `${script}.lua`),
          baseUrl: server.url,
          connections,
          durationSeconds,
          core: 1,
          env: { BENCH_LUA_DIR: wrkDir, BENCH_TOKEN: token, ...env },
        })
        if (result.non2xx > 0) throw new Error(`${load}, log ${log}: ${result.non2xx} errors`)
        const rps = result.requests / (result.duration_us / 1e6)
        ;(figures[`${load} log ${log}`] ??= []).push(rps)
        console.log(`round ${round + 1} ${load} log ${log}: ${Math.round(rps)} req/s`)
      }
    }
  }
  const median = (list: number[]) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)]!
  for (const load of Object.keys(loads)) {
    const on = median(figures[`${load} log on`]!)
    const off = median(figures[`${load} log off`]!)
    console.log(
      `${load}: ${Math.round(off)} req/s without the log, ${Math.round(on)} with it: ${(on / off).toFixed(2)}x`,
    )
  }
  console.log(`access log: ${JSON.stringify(storage.accessLog.stats)}`)
  await servers.on.close(1000)
  await servers.off.close(1000)
} finally {
  await storage.close()
  rmSync(dir, { recursive: true, force: true })
}
