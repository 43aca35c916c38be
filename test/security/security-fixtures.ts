import { request, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http'
import type { Storage } from '../../core/ports/storage.js'
import { CliChild } from '../support/cli-child.js'

/** Bounds every wait on a child process or a socket, so that a hung one fails instead of hanging. */
const WAIT_MS = 20_000

/** Calls made to a storage, by `store.method` (`beneficiaries.list`, `sessions.isTokenActive` …). */
export class StorageCalls {
  readonly #counts = new Map<string, number>()

  add(name: string): void {
    this.#counts.set(name, (this.#counts.get(name) ?? 0) + 1)
  }

  /** Calls whose name starts with `prefix` (every call when omitted). */
  count(prefix = ''): number {
    let total = 0
    for (const [name, n] of this.#counts) if (name.startsWith(prefix)) total += n
    return total
  }

  /** Every call so far, as `{ 'beneficiaries.list': 1 }`. */
  snapshot(): Record<string, number> {
    return Object.fromEntries(this.#counts)
  }

  reset(): void {
    this.#counts.clear()
  }
}

/**
 * Wraps every port of `storage` (every method of every store, whatever the port declares, and
 * `ping`) in a proxy that counts calls, then forwards them unchanged.
 */
export function countStorageCalls(storage: Storage): { storage: Storage; calls: StorageCalls } {
  const calls = new StorageCalls()
  const wrap = <T extends object>(name: string, store: T): T =>
    new Proxy(store, {
      get(target, property) {
        const value: unknown = Reflect.get(target, property, target)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          calls.add(`${name}.${String(property)}`)
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      },
    })
  const counted: Storage = {
    beneficiaries: wrap('beneficiaries', storage.beneficiaries),
    clients: wrap('clients', storage.clients),
    sessions: wrap('sessions', storage.sessions),
    signingKeys: wrap('signingKeys', storage.signingKeys),
    ping: () => {
      calls.add('storage.ping')
      return storage.ping()
    },
    close: () => storage.close(),
  }
  return { storage: counted, calls }
}

/** An HTTP answer with its body as text and, when it is JSON, parsed. */
export interface HttpAnswer {
  readonly status: number
  readonly headers: IncomingHttpHeaders
  readonly body: string
  readonly json: Record<string, unknown> | undefined
}

/** What to send; a header given as an array goes out as several header lines. */
export interface HttpCall {
  readonly headers?: OutgoingHttpHeaders
  /** Sent as JSON with `content-type: application/json`. */
  readonly body?: unknown
  /** Sent as is (with whatever content type `headers` says). */
  readonly raw?: string
  readonly token?: string
}

/**
 * One request over a new connection to `origin` (`http://127.0.0.1:port`), with node:http so
 * that any header can be sent: repeated lines, huge values, tabs. Rejects when the server closes
 * the connection without answering, or after 20 s.
 */
export function http(
  origin: string,
  method: string,
  path: string,
  call: HttpCall = {},
): Promise<HttpAnswer> {
  const headers: OutgoingHttpHeaders = { ...call.headers }
  if (call.token !== undefined) headers['authorization'] = `Bearer ${call.token}`
  let payload = call.raw
  if (call.body !== undefined) {
    payload = JSON.stringify(call.body)
    headers['content-type'] ??= 'application/json'
  }
  if (payload !== undefined) headers['content-length'] = Buffer.byteLength(payload)
  const url = new URL(path, origin)
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      { method, headers, agent: false, timeout: WAIT_MS },
      (response) => {
        const chunks: Buffer[] = []
        response.on('data', (chunk: Buffer) => chunks.push(chunk))
        response.on('error', reject)
        response.on('end', () => {
          const body = Buffer.concat(chunks).toString('utf8')
          const json = response.headers['content-type']?.startsWith('application/json')
            ? (JSON.parse(body) as Record<string, unknown>)
            : undefined
          resolve({ status: response.statusCode ?? 0, headers: response.headers, body, json })
        })
      },
    )
    outgoing.on('timeout', () => outgoing.destroy(new Error(`${method} ${path} timed out`)))
    outgoing.on('error', reject)
    outgoing.end(payload)
  })
}

/** Rejects with `message` if `promise` has not settled within `ms`. */
export function within<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${message}: no answer within ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}

/**
 * A `beneficiaries serve` child process on a free port of 127.0.0.1. Keeps everything it writes
 * to standard output and standard error, as text, for the log checks (D25).
 */
export class ServeChild {
  readonly exited: Promise<number | null>
  readonly #process: CliChild
  #stdout = ''
  #listening: ((url: string) => void) | undefined

  /** Starts `serve --db db --port 0` with `env` (and PATH only) as its environment. */
  constructor(db: string, env: Record<string, string> = {}) {
    this.#process = new CliChild({
      args: ['serve', '--db', db, '--port', '0'],
      env,
      onLine: (line) => {
        this.#stdout += `${line}\n`
        this.#notify()
      },
    })
    this.exited = this.#process.exited.then((exit) => exit.code)
  }

  /** Everything written to standard output so far. */
  get stdout(): string {
    return this.#stdout
  }

  /** Everything written to standard error so far. */
  get stderr(): string {
    return this.#process.stderr
  }

  /** The JSON lines of standard output so far. */
  get lines(): Record<string, unknown>[] {
    return this.#stdout
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => JSON.parse(line) as Record<string, unknown>)
  }

  /** `http://127.0.0.1:port`, once the server logged that it listens. */
  url(): Promise<string> {
    const waiting = new Promise<string>((resolve, reject) => {
      this.#listening = resolve
      void this.exited.then((code) =>
        reject(new Error(`serve exited with ${String(code)}: ${this.stderr}`)),
      )
      this.#notify()
    })
    return within(waiting, WAIT_MS, 'serve did not start')
  }

  /** Sends `signal` and resolves with the exit status (SIGKILL after 20 s). */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    return (await this.#process.stop(signal, WAIT_MS)).code
  }

  /** Kills the process if it still runs: for `after` hooks. */
  kill(): void {
    void this.#process.kill()
  }

  #notify(): void {
    if (this.#listening === undefined) return
    const match = /"url":"(http:\/\/[^"]+)"/.exec(this.#stdout)
    if (match !== null) {
      this.#listening(match[1]!)
      this.#listening = undefined
    }
  }
}

/** Runs the CLI in a child process (as an operator would) and resolves with its status and output. */
export async function runCliChild(
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<{ status: number | null; out: string; err: string }> {
  let out = ''
  const child = new CliChild({ args, env, onLine: (line) => (out += `${line}\n`) })
  try {
    const exit = await within(child.exited, WAIT_MS, `beneficiaries ${args.join(' ')}`)
    return { status: exit.code, out, err: child.stderr }
  } finally {
    void child.kill()
  }
}
