import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** The compiled CLI, found from this file so that the tests run from any output folder. */
export const CLI = fileURLToPath(new URL('../../server/cli.js', import.meta.url))

/** A JSON line the server logged. */
export type LogLine = Record<string, unknown>

/** How a child process ended. */
export interface Exit {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** `performance.now()` when the exit was seen. */
  readonly at: number
}

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
  readonly child: ChildProcessWithoutNullStreams
  readonly lines: LogLine[] = []
  readonly exited: Promise<Exit>
  #exit: Exit | undefined
  #buffer = ''
  #stderr = ''
  #waiters: { test: (line: LogLine) => boolean; resolve: (line: LogLine) => void }[] = []

  private constructor(db: string, env: Readonly<Record<string, string>>) {
    this.child = spawn(process.execPath, [CLI, 'serve', '--db', db, '--port', '0'], {
      env: { PATH: process.env['PATH'] ?? '', ...NO_LIMITS, ...env },
    })
    this.child.stdout.setEncoding('utf8')
    this.child.stdout.on('data', (chunk: string) => this.#take(chunk))
    this.child.stderr.setEncoding('utf8')
    this.child.stderr.on('data', (chunk: string) => (this.#stderr += chunk))
    this.exited = new Promise((resolve) =>
      this.child.on('exit', (code, signal) => {
        this.#exit = { code, signal, at: performance.now() }
        resolve(this.#exit)
      }),
    )
  }

  /**
   * Starts the server on `db` and resolves once it listens.
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
    return this.#stderr
  }

  /** Whether the process has exited. */
  get running(): boolean {
    return this.#exit === undefined
  }

  /** Resolves with the first line (logged before or later) that passes `test`; rejects after `timeoutMs`. */
  waitFor(test: (line: LogLine) => boolean, timeoutMs = 10_000): Promise<LogLine> {
    const found = this.lines.find(test)
    if (found !== undefined) return Promise.resolve(found)
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiters = this.#waiters.filter((waiter) => waiter.resolve !== done)
        reject(new Error(`no such log line within ${timeoutMs} ms; stderr: ${this.#stderr}`))
      }, timeoutMs)
      const done = (line: LogLine): void => {
        clearTimeout(timer)
        resolve(line)
      }
      this.#waiters.push({ test, resolve: done })
    })
  }

  /** Resolves with the exit, or `undefined` when the process still runs after `timeoutMs`. */
  async exitWithin(timeoutMs: number): Promise<Exit | undefined> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), timeoutMs)
    })
    try {
      return await Promise.race([this.exited, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Sends `signal` (SIGKILL by default) unless the process has exited, and waits for the exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<Exit> {
    if (this.#exit !== undefined) return this.#exit
    this.child.kill(signal)
    const exit = await this.exitWithin(10_000)
    if (exit !== undefined) return exit
    this.child.kill('SIGKILL')
    return this.exited
  }

  /** Lines logged at level error or above. */
  get errors(): LogLine[] {
    return this.lines.filter((line) => Number(line['level']) >= 50)
  }

  #take(chunk: string): void {
    this.#buffer += chunk
    let newline: number
    while ((newline = this.#buffer.indexOf('\n')) !== -1) {
      const text = this.#buffer.slice(0, newline)
      this.#buffer = this.#buffer.slice(newline + 1)
      let line: LogLine
      try {
        line = JSON.parse(text) as LogLine
      } catch {
        line = { level: 60, unparsed: text }
      }
      if (typeof line['status'] === 'number' && line['status'] < 500) continue
      this.lines.push(line)
      for (const waiter of [...this.#waiters]) {
        if (waiter.test(line)) {
          this.#waiters.splice(this.#waiters.indexOf(waiter), 1)
          waiter.resolve(line)
        }
      }
    }
  }
}
