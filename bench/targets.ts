import type { ChildProcess } from 'node:child_process'
import { spawnSync } from 'node:child_process'
import { copyFileSync, existsSync, openSync, readFileSync, closeSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { join } from 'node:path'
import { removeDatabase, type BenchData, type Credentials } from './bench-data.js'
import {
  copyDatabase,
  databaseUrl,
  dropDatabase,
  waitForDatabaseIdle,
  type PgBenchData,
} from './pg-bench-data.js'
import { exitOf, hasExited, type ProcessGroup } from './process-group.js'
import { haproxyConfig, sharedLimits } from './scale-out-target.js'
import type { TargetName } from './result-table.js'

/** A target that is up and answering. */
export interface RunningTarget {
  readonly name: TargetName
  readonly process: ChildProcess
  /** Every process whose CPU and memory count as the target's: the server, or the balancer and its instances. */
  readonly pids: readonly (number | undefined)[]
  /** Its working copy of the PostgreSQL database, whose backends' CPU counts beside its own. */
  readonly database: string | undefined
  /** `http://127.0.0.1:PORT` */
  readonly baseUrl: string
  /** A real access token from a real login; absent for the limit. */
  readonly token: string | undefined
  /** Stops the process and deletes its working copy of the database. */
  stop(): Promise<void>
  /**
   * Resolves once the target has no backlog left: it answers quickly, and on PostgreSQL its
   * database runs no statement either (a pool queues requests the server no longer shows).
   */
  idle(): Promise<void>
}

/** Where things are and who runs where. */
export interface TargetContext {
  readonly group: ProcessGroup
  readonly distRoot: string
  readonly repoRoot: string
  /** Per-run working copies of the databases (under `bench/.data`). */
  readonly dataDir: string
  /** The SQLite data, when a target other than PostgreSQL's runs. */
  readonly data: BenchData | undefined
  /** The PostgreSQL data, when a PostgreSQL target runs. */
  readonly pgData: PgBenchData | undefined
  /** Core the server is pinned to. */
  readonly core: number
}

const READY_TIMEOUT_MS = 60_000
/** A health check answered faster than this means no backlog is left. */
const IDLE_RESPONSE_MS = 20
/** High enough never to trigger during a run: the service's limiter still runs on every request. */
const UNLIMITED_ENV = {
  RATE_LIMIT_STANDARD: '1000000000',
  RATE_LIMIT_WRITE: '1000000000',
  RATE_LIMIT_AUTH: '1000000',
}

/**
 * Starts one target on its core and waits until it answers: the limit, the peer (on a fresh
 * copy of its database), or the service over hyper-express (`uws`) or node:http (`node`) on a
 * fresh copy of the seeded database, with production logging and the limits set high.
 */
export async function startTarget(name: TargetName, ctx: TargetContext): Promise<RunningTarget> {
  const port = await freePort()
  const baseUrl = `http://127.0.0.1:${port}`
  const logFile = join(ctx.dataDir, `${name}.stderr.log`)
  const stderr = openSync(logFile, 'w')
  let workDb: string | undefined
  let workDatabase: string | undefined
  let child: ChildProcess
  const instances: ChildProcess[] = []
  try {
    const stdio = ['ignore', 'ignore', stderr] as const
    switch (name) {
      case 'limit':
        child = ctx.group.spawn(
          process.execPath,
          [
            join(ctx.distRoot, 'bench', 'limit-server.js'),
            '--port',
            String(port),
            '--body',
            requireData(ctx).detailBodyFile,
          ],
          { core: ctx.core, stdio: [...stdio] },
        )
        break
      case 'peer':
        ensurePeerInstalled(ctx.repoRoot)
        workDb = workingCopy(requireData(ctx).peerDb, join(ctx.dataDir, 'peer-work.db'))
        child = ctx.group.spawn(
          process.execPath,
          [
            join(ctx.repoRoot, 'bench', 'peer', 'server.mjs'),
            '--db',
            workDb,
            '--port',
            String(port),
          ],
          { core: ctx.core, stdio: [...stdio] },
        )
        break
      case 'pg-peer': {
        ensurePeerInstalled(ctx.repoRoot)
        const pgData = requirePgData(ctx)
        workDatabase = 'bench_work_peer'
        await copyDatabase(pgData.seedDatabase, workDatabase)
        child = ctx.group.spawn(
          process.execPath,
          [
            join(ctx.repoRoot, 'bench', 'peer', 'server.mjs'),
            '--database-url',
            databaseUrl(workDatabase, 'peer'),
            '--port',
            String(port),
          ],
          { core: ctx.core, stdio: [...stdio] },
        )
        break
      }
      case 'pg':
      case 'pg-redis': {
        const pgData = requirePgData(ctx)
        workDatabase = 'bench_work_service'
        const url = await copyDatabase(pgData.seedDatabase, workDatabase)
        child = spawnService(ctx, port, url, name === 'pg' ? [] : sharedLimits(), stdio)
        break
      }
      case 'pg-redis-2': {
        // Two instances on one database and one Redis behind HAProxy, as examples/scale-out
        // runs them: the balancer sets X-Forwarded-For and the instances trust it.
        const pgData = requirePgData(ctx)
        workDatabase = 'bench_work_service'
        const url = await copyDatabase(pgData.seedDatabase, workDatabase)
        const limits = sharedLimits()
        const ports = [await freePort(), await freePort()]
        for (const instancePort of ports) {
          const instance = spawnService(ctx, instancePort, url, limits, stdio)
          instances.push(instance)
          await waitUntilReady(instance, `http://127.0.0.1:${instancePort}`, logFile)
        }
        const config = join(ctx.dataDir, 'haproxy.cfg')
        writeFileSync(config, haproxyConfig(port, ports))
        child = ctx.group.spawn('haproxy', ['-f', config], { core: ctx.core, stdio: [...stdio] })
        break
      }
      case 'uws':
      case 'node':
        workDb = workingCopy(requireData(ctx).serviceDb, join(ctx.dataDir, 'service-work.db'))
        child = ctx.group.spawn(
          process.execPath,
          [
            join(ctx.distRoot, 'server', 'cli.js'),
            'serve',
            '--db',
            workDb,
            '--host',
            '127.0.0.1',
            '--port',
            String(port),
            '--transport',
            name,
          ],
          {
            core: ctx.core,
            env: { ...process.env, ...UNLIMITED_ENV, NODE_ENV: 'production' },
            stdio: [...stdio],
          },
        )
        break
    }
  } finally {
    closeSync(stderr)
  }
  const stop = async () => {
    await ctx.group.stop(child)
    for (const instance of instances) await ctx.group.stop(instance)
    if (workDb !== undefined) removeDatabase(workDb)
    if (workDatabase !== undefined) await dropDatabase(workDatabase)
  }
  try {
    await waitUntilReady(child, baseUrl, logFile)
    const credentials = credentialsOf(name, ctx)
    const token = credentials === undefined ? undefined : await login(baseUrl, credentials)
    const database = workDatabase
    const idle = async () => {
      await waitUntilIdle(baseUrl)
      if (database !== undefined) await waitForDatabaseIdle(database)
    }
    const pids = [child.pid, ...instances.map((instance) => instance.pid)]
    return { name, process: child, pids, database, baseUrl, token, stop, idle }
  } catch (error) {
    await stop()
    throw error
  }
}

function credentialsOf(name: TargetName, ctx: TargetContext): Credentials | undefined {
  switch (name) {
    case 'limit':
      return undefined
    case 'peer':
      return requireData(ctx).peerClient
    case 'pg-peer':
      return requirePgData(ctx).peerClient ?? missing('the PostgreSQL peer has no table')
    case 'pg':
    case 'pg-redis':
    case 'pg-redis-2':
      return requirePgData(ctx).client
    default:
      return requireData(ctx).client
  }
}

/** The service over uws on a PostgreSQL database, with `extra` arguments to `serve`. */
function spawnService(
  ctx: TargetContext,
  port: number,
  url: string,
  extra: readonly string[],
  stdio: readonly ['ignore', 'ignore', number],
): ChildProcess {
  return ctx.group.spawn(
    process.execPath,
    [
      join(ctx.distRoot, 'server', 'cli.js'),
      'serve',
      '--database-url',
      url,
      '--host',
      '127.0.0.1',
      '--port',
      String(port),
      '--transport',
      'uws',
      ...extra,
    ],
    {
      core: ctx.core,
      env: { ...process.env, ...UNLIMITED_ENV, NODE_ENV: 'production' },
      stdio: [...stdio],
    },
  )
}

function requireData(ctx: TargetContext): BenchData {
  return ctx.data ?? missing('a target on SQLite runs without its data')
}

function missing(what: string): never {
  throw new Error(what)
}

function requirePgData(ctx: TargetContext): PgBenchData {
  if (ctx.pgData === undefined) throw new Error('a PostgreSQL target runs without its data')
  return ctx.pgData
}

/** Installs the peer's own dependencies (Fastify) on first use; they are not the product's. */
function ensurePeerInstalled(repoRoot: string): void {
  const peerDir = join(repoRoot, 'bench', 'peer')
  if (existsSync(join(peerDir, 'node_modules', 'fastify', 'package.json'))) return
  console.log('installing the peer (npm install --prefix bench/peer)')
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm'
  const result = spawnSync(npm, ['install', '--prefix', peerDir, '--no-audit', '--no-fund'], {
    stdio: 'inherit',
    timeout: 300_000,
  })
  if (result.status !== 0) throw new Error('npm install --prefix bench/peer failed')
}

function workingCopy(pristine: string, copy: string): string {
  removeDatabase(copy)
  copyFileSync(pristine, copy)
  return copy
}

/** A port free on the loopback right now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer()
    server.once('error', reject)
    server.listen(0, '127.0.0.1', () => {
      const address = server.address()
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      )
    })
  })
}

async function waitUntilReady(child: ChildProcess, baseUrl: string, logFile: string) {
  const deadline = performance.now() + READY_TIMEOUT_MS
  const exited = exitOf(child)
  while (performance.now() < deadline) {
    if (hasExited(child)) {
      throw new Error(
        `the server exited (${String(await exited)}): ${readFileSync(logFile, 'utf8').slice(-2000)}`,
      )
    }
    try {
      const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(1000) })
      await response.arrayBuffer()
      if (response.ok) return
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the server did not answer within ${READY_TIMEOUT_MS / 1000} s`)
}

/**
 * Waits until the server answers `/healthz` quickly again: a slow target (the peer's table scans)
 * still works through the requests queued by the previous scenario after wrk has stopped, and
 * the next scenario must not pay for them. Bounded: gives up after `timeoutMs`.
 */
export async function waitUntilIdle(baseUrl: string, timeoutMs = 120_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    const started = performance.now()
    try {
      const response = await fetch(`${baseUrl}/healthz`, { signal: AbortSignal.timeout(10_000) })
      await response.arrayBuffer()
      if (performance.now() - started < IDLE_RESPONSE_MS) return
    } catch {
      // Still busy.
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

async function login(baseUrl: string, credentials: Credentials): Promise<string> {
  const response = await fetch(`${baseUrl}/v3/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(credentials),
    signal: AbortSignal.timeout(10_000),
  })
  const body = (await response.json()) as { access_token?: unknown }
  if (!response.ok || typeof body.access_token !== 'string') {
    throw new Error(`login failed with ${response.status}: ${JSON.stringify(body)}`)
  }
  return body.access_token
}

/** Peak resident set (VmHWM) of a process, in MiB; 0 when it cannot be read. */
export function peakRssMb(pid: number | undefined): number {
  if (pid === undefined) return 0
  try {
    const match = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
    return match === null ? 0 : Number(match[1]) / 1024
  } catch {
    return 0
  }
}

/** Clock ticks per second of `/proc` CPU times (`getconf CLK_TCK`): 100 on Linux. */
const TICKS_PER_SECOND = 100

/**
 * CPU time a process has used so far (user and system, every thread), in milliseconds; 0 when it
 * cannot be read. Unlike requests per second, CPU per request does not move when the machine's
 * other tenants take the core away (hypervisor steal) or slow the load generator.
 */
export function processCpuMs(pid: number | undefined): number {
  return pid === undefined ? 0 : statCpuMs(`/proc/${pid}/stat`)
}

/**
 * CPU time of a process's main thread so far, in milliseconds (0 when it cannot be read): for
 * Node.js, the event loop's, without the worker threads (the SQLite writer, the checkpointer)
 * and V8's helpers that `processCpuMs` counts too.
 */
export function mainThreadCpuMs(pid: number | undefined): number {
  return pid === undefined ? 0 : statCpuMs(`/proc/${pid}/task/${pid}/stat`)
}

/** User and system time of a `/proc` `stat` file, in milliseconds; 0 when it cannot be read. */
function statCpuMs(file: string): number {
  try {
    const stat = readFileSync(file, 'utf8')
    // Fields after the command name, which may hold spaces, closed by the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_SECOND
  } catch {
    return 0
  }
}

/** The machine's CPU time counters: all of it, and what the hypervisor gave to others (steal). */
export function machineCpuTicks(): { total: number; steal: number } {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!
    const ticks = line.trim().split(/\s+/).slice(1, 9).map(Number)
    return { total: ticks.reduce((sum, n) => sum + n, 0), steal: ticks[7] ?? 0 }
  } catch {
    return { total: 0, steal: 0 }
  }
}
