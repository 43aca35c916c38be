import { execFileSync, spawn, type ChildProcess } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'

/**
 * PostgreSQL and Redis servers of one test file's own, for the fault tests that stop them under
 * load. Stopping the machine's shared servers (../shared/SERVICES.md) would fail whichever other
 * file, running in parallel, was connecting at that moment; a private server is the same real
 * program, stopped and started without anyone else noticing.
 */

const UNDER_CI = process.env['CI'] === 'true'

/** A port nobody listens on now (the kernel's choice), for a server about to start. */
async function freePort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as { port: number }
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

/**
 * `false` when `reason` is `undefined`; else the reason a suite skips with, or, under `CI=true`
 * where every machine has these programs, an error.
 */
function skipOrFail(reason: string | undefined): string | false {
  if (reason === undefined) return false
  if (UNDER_CI) throw new Error(`${reason}, and CI=true`)
  return reason
}

function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql'
  if (!existsSync(root)) return undefined
  const version = readdirSync(root)
    .sort((a, b) => Number(a) - Number(b))
    .at(-1)
  const bin = version === undefined ? undefined : join(root, version, 'bin')
  return bin !== undefined && existsSync(join(bin, 'initdb')) ? bin : undefined
}

/** Why this machine cannot run a private PostgreSQL, or `false` when it can. */
export function privatePostgresSkip(): string | false {
  return skipOrFail(
    postgresBinaries() === undefined
      ? 'no PostgreSQL server programs under /usr/lib/postgresql/<version>/bin'
      : undefined,
  )
}

/**
 * A PostgreSQL cluster in a temporary directory, on a port of its own, trusting local
 * connections as role `postgres`. PostgreSQL refuses to run as root: as root, its programs run
 * as the `postgres` user that Debian's package creates.
 */
export class PrivatePostgres {
  readonly #bin: string
  readonly #directory: string
  readonly port: number

  private constructor(bin: string, directory: string, port: number) {
    this.#bin = bin
    this.#directory = directory
    this.port = port
  }

  /** Its `postgres` database, for this file alone. */
  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`
  }

  /** Creates the cluster and starts it (under a second on this machine). */
  static async create(): Promise<PrivatePostgres> {
    const bin = postgresBinaries()
    if (bin === undefined) throw new Error(privatePostgresSkip() || 'no PostgreSQL programs')
    const directory = mkdtempSync(join(tmpdir(), 'beneficiaries-pg-'))
    if (process.getuid?.() === 0) {
      const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim())
      chownSync(directory, uid, -1)
    }
    const cluster = new PrivatePostgres(bin, directory, await freePort())
    cluster.#run('initdb', ['-D', cluster.#data, '-U', 'postgres', '--auth=trust', '-E', 'UTF8'])
    cluster.start()
    return cluster
  }

  get #data(): string {
    return join(this.#directory, 'data')
  }

  #run(program: string, args: string[]): void {
    const path = join(this.#bin, program)
    const [command, commandArgs] =
      process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', path, ...args]] : [path, args]
    execFileSync(command, commandArgs, { stdio: 'ignore' })
  }

  /** Starts it and waits until it accepts connections. */
  start(): void {
    const options = `-p ${this.port} -k ${this.#directory} -c listen_addresses=127.0.0.1`
    this.#run('pg_ctl', [
      '-D',
      this.#data,
      '-l',
      join(this.#directory, 'log'),
      '-w',
      '-o',
      options,
      'start',
    ])
  }

  /** Stops it at once, as a crash would (`-m immediate`). */
  stop(): void {
    this.#run('pg_ctl', ['-D', this.#data, '-m', 'immediate', '-w', 'stop'])
  }

  /** Stops it if it runs, and deletes the cluster. */
  destroy(): void {
    try {
      this.stop()
    } catch {
      // Not running: nothing to stop.
    }
    rmSync(this.#directory, { recursive: true, force: true })
  }
}

/** Why this machine cannot run a private Redis, or `false` when it can. */
export function privateRedisSkip(): string | false {
  let reason: string | undefined
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' })
  } catch {
    reason = 'no redis-server program on the PATH'
  }
  return skipOrFail(reason)
}

/** A `redis-server` child on a port of its own that keeps nothing on disk, as the machine's. */
export class PrivateRedis {
  #child: ChildProcess | undefined
  readonly port: number

  private constructor(port: number) {
    this.port = port
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`
  }

  static async create(): Promise<PrivateRedis> {
    const redis = new PrivateRedis(await freePort())
    await redis.start()
    return redis
  }

  /** Starts it on its port and waits (at most 10 s) until it answers. */
  async start(): Promise<void> {
    if (this.#child !== undefined) return
    const child = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      { stdio: 'ignore' },
    )
    this.#child = child
    child.once('exit', () => {
      if (this.#child === child) this.#child = undefined
    })
    const deadline = performance.now() + 10_000
    while (!this.#answers()) {
      if (this.#child !== child) throw new Error('the private Redis exited as it started')
      if (performance.now() > deadline) throw new Error('the private Redis did not answer in 10 s')
      await delay(20)
    }
  }

  /** Stops it at once, forgetting everything (`redis-cli shutdown nosave`), and waits for it. */
  async stop(): Promise<void> {
    const child = this.#child
    if (child === undefined) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    try {
      execFileSync('redis-cli', ['-p', String(this.port), 'shutdown', 'nosave'], {
        stdio: 'ignore',
      })
    } catch {
      child.kill('SIGKILL')
    }
    await exited
  }

  /** Stops it if it runs. */
  async destroy(): Promise<void> {
    const child = this.#child
    if (child === undefined) return
    const exited = new Promise((resolve) => child.once('exit', resolve))
    child.kill('SIGKILL')
    await exited
  }

  #answers(): boolean {
    try {
      return (
        execFileSync('redis-cli', ['-p', String(this.port), 'ping'], {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'ignore'],
        }).trim() === 'PONG'
      )
    } catch {
      return false
    }
  }
}
