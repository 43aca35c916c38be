import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { CliChild, type Exit } from '../support/cli-child.js'
import { databaseArgs } from './fault-support.js'

export type { Exit } from '../support/cli-child.js'

/** A JSON line the server logged. */
export type LogLine = Record<string, unknown>

/** Rate limits so high that no fault test ever meets one. */
export const NO_LIMITS = Object.freeze({
  RATE_LIMIT_AUTH: '1000000',
  RATE_LIMIT_WRITE: '1000000',
  RATE_LIMIT_STANDARD: '1000000',
})

/**
 * A real `beneficiaries serve` child process on 127.0.0.1 and an ephemeral port. It keeps the
 * lines it logged, except the one line per request of a successful or refused request (status
 * below 500), which a crash round makes by the thousand.
 */
export class ServeChild {
  readonly lines: LogLine[] = []
  readonly #process: CliChild
  #waiters: { test: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = []

  private constructor(db: string, env: Readonly<Record<string, string>>) {
    this.#process = new CliChild({
      args: ['serve', ...databaseArgs(db), '--port', '0'],
      env: { ...NO_LIMITS, ...env },
      onLine: (line) => this.#take(line),
    })
  }

  get child(): ChildProcessWithoutNullStreams {
    return this.#process.child
  }

  get exited(): Promise<Exit> {
    return this.#process.exited
  }

  /**
   * Starts the server on `db` (a SQLite file or a PostgreSQL URL) and resolves once it listens.
   * @throws Error (and kills the child) when it exits or does not listen within `timeoutMs`.
   */
  static async start(
    db: string,
    env: Readonly<Record<string, string>> = {},
    timeoutMs = 20_000,
  ): Promise<ServeChild> {
    const server = new ServeChild(db, env)
    const listening = server.waitFor((line) => typeof line['url'] === 'string', timeoutMs)
    const ended = server.exited.then((exit) => {
      throw new Error(
        `serve exited (${exit.code ?? exit.signal}) before listening: ${server.stderr}`,
      )
    })
    try {
      await Promise.race([listening, ended])
    } catch (error) {
      await server.kill()
      throw error
    }
    ended.catch(() => undefined)
    return server
  }

  /** `http://127.0.0.1:port`. */
  get url(): string {
    const line = this.lines.find((entry) => typeof entry['url'] === 'string')
    if (line === undefined) throw new Error('the server has not said where it listens')
    return String(line['url'])
  }

  get port(): number {
    return Number(new URL(this.url).port)
  }

  get stderr(): string {
    return this.#process.stderr
  }

  /** Whether the process still runs. */
  get running(): boolean {
    return this.#process.running
  }

  /** Resolves with the first line (logged before or later) that passes `test`; rejects after `timeoutMs`. */
  waitFor(test: (line: LogLine) => boolean, timeoutMs = 10_000): Promise<LogLine> {
    const found = this.lines.find(test)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((waiter) => waiter.resolve !== done)
        reject(new Error(`no such log line within ${timeoutMs} ms; stderr: ${this.stderr}`))
      }, timeoutMs)
      const done = (line: LogLine): void => {
        clearTimeout(timer)
        resolve(line)
      }
      this.#waiters.push({ test, resolve: done })
    })
  }

  /** Resolves with the exit, or `undefined` when the process still runs after `timeoutMs`. */
  exitWithin(timeoutMs: number): Promise<Exit | undefined> {
    return this.#process.exitWithin(timeoutMs)
  }

  /** Sends `signal` (SIGKILL by default) unless the process has exited, and waits for the exit. */
  kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    return this.#process.stop(signal)
  }

  /** Lines logged at level error or above. */
  get errors(): LogLine[] {
    return this.lines.filter((line) => Number(line['level']) >= 50)
  }

  #take(text: string): void {
    let line: LogLine
    try {
      line = JSON.parse(text) as LogLine
    } catch {
      line = { level: 60, unparsed: text }
    }
    if (typeof line['status'] === 'number' && line['status'] < 500) return
    this.lines.push(line)
    for (const waiter of [...this.#waiters]) {
      if (waiter.test(line)) {
        this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
        waiter.resolve(line)
      }
    }
  }
}
