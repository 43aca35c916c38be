import assert from 'node:assert/strict'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connect } from 'node:net'
import { after, describe, it } from 'node:test'
import { ServeChild } from '../../faults/serve-child.js'
import { CliChild } from '../../support/cli-child.js'
import { skipOn, TRANSPORTS } from '../../support/transports.js'

const directory = mkdtempSync(join(tmpdir(), 'beneficiaries-npm-start-'))
const WAIT_MS = 20_000

/** `npm start` from the package's folder, as the README tells a user to run the server. */
class NpmStart {
  readonly lines: Record<string, unknown>[] = []
  readonly process: CliChild
  /**
   * npm's own exit: not `process.exited`, which also waits for the output pipes, held open by
   * a server left running.
   */
  readonly npmExit: Promise<number | null>
  #listening: (line: Record<string, unknown>) => void = () => {}
  readonly listening = new Promise<Record<string, unknown>>((resolve) => {
    this.#listening = resolve
  })

  constructor(name: string) {
    this.process = new CliChild({
      command: ['npm', 'start', '--'],
      args: ['--db', join(directory, `${name}.sqlite`), '--port', '0'],
      env: { HOME: directory, npm_config_update_notifier: 'false' },
      detached: true,
      onLine: (text) => {
        // npm's own lines ("> beneficiary-service@… start") are not JSON.
        if (!text.startsWith('{')) return
        const line = JSON.parse(text) as Record<string, unknown>
        this.lines.push(line)
        if (typeof line['url'] === 'string') this.#listening(line)
      },
    })
    this.npmExit = new Promise((resolve) => this.process.child.once('exit', resolve))
  }

  /** npm's exit status, or `undefined` when it still runs after `ms`. */
  async exitWithin(ms: number): Promise<number | null | undefined> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<undefined>(
      (resolve) => (timer = setTimeout(() => resolve(undefined), ms)),
    )
    try {
      return await Promise.race([this.npmExit, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /** Kills npm and whatever it started (its process group). */
  killAll(): void {
    try {
      process.kill(-this.process.child.pid!, 'SIGKILL')
    } catch {
      // Already gone.
    }
  }

  /** Resolves with the server's pid and URL once it listens; rejects when npm exits first. */
  async started(): Promise<{ pid: number; url: string }> {
    const line = await Promise.race([
      this.listening,
      this.npmExit.then((code) => {
        throw new Error(`npm start exited (${code}) first: ${this.process.stderr}`)
      }),
    ])
    return { pid: Number(line['pid']), url: String(line['url']) }
  }

  messages(): string[] {
    return this.lines.map((line) => String(line['msg']))
  }
}

/** Whether a process with this pid exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/** Resolves once `condition()` holds; rejects after `ms`. */
async function until(condition: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = performance.now() + ms
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${ms} ms`)
    await new Promise((resolve) => setImmediate(resolve))
  }
}

describe('npm start under a supervisor', () => {
  const started: NpmStart[] = []
  after(async () => {
    for (const run of started) {
      run.killAll()
      await run.process.exited
    }
    rmSync(directory, { recursive: true, force: true })
  })

  it('stops the server on SIGTERM to npm: drained, "Stopped", exit 0, nothing left running', async () => {
    const run = new NpmStart('term')
    started.push(run)
    const { pid, url } = await run.started()
    assert.notEqual(pid, run.process.child.pid, 'the server runs under npm')
    assert.equal((await fetch(`${url}/healthz`)).status, 200)

    run.process.child.kill('SIGTERM')
    assert.equal(await run.exitWithin(WAIT_MS), 0, run.process.stderr)
    assert.ok(run.messages().includes('Stopped'), run.messages().join('\n'))
    await until(() => !alive(pid), WAIT_MS, 'the server process gone')
  })

  it('stops once on a Ctrl-C, which reaches npm and the server both', async () => {
    const run = new NpmStart('int')
    started.push(run)
    const { pid } = await run.started()
    // A terminal signals the whole foreground process group; npm forwards it as well.
    process.kill(-run.process.child.pid!, 'SIGINT')
    assert.equal(await run.exitWithin(WAIT_MS), 0, run.process.stderr)
    const messages = run.messages()
    assert.equal(messages.filter((msg) => msg.startsWith('Shutting down')).length, 1)
    assert.equal(messages.at(-1), 'Stopped', messages.join('\n'))
    await until(() => !alive(pid), WAIT_MS, 'the server process gone')
  })
})

describe('a second stop signal while the server stops', () => {
  const servers: ServeChild[] = []
  after(async () => {
    for (const server of servers) await server.kill()
  })

  for (const transport of TRANSPORTS) {
    const skip = skipOn(transport)
    it(
      `is logged and leaves the request in flight to finish (${transport})`,
      { skip },
      async () => {
        const server = await ServeChild.start(join(directory, `again-${transport}.sqlite`), {
          TRANSPORT: transport,
        })
        servers.push(server)
        // A login whose body has not all arrived: a request in flight, holding the stop.
        const socket = connect(server.port, '127.0.0.1')
        let answer = ''
        socket.setEncoding('latin1')
        socket.on('data', (chunk: string) => (answer += chunk))
        const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
        const body = JSON.stringify({ client_id: 'nobody', client_secret: 'nothing' })
        socket.write(
          'POST /v3/auth/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n' +
            `Content-Length: ${body.length}\r\n\r\n${body.slice(0, 5)}`,
        )
        // Answered after the login's head was read: that request is in flight.
        assert.equal((await fetch(`${server.url}/healthz`)).status, 200)

        server.child.kill('SIGTERM')
        await server.waitFor((line) => line['signal'] === 'SIGTERM')
        server.child.kill('SIGINT')
        await server.waitFor((line) => line['signal'] === 'SIGINT')
        assert.ok(server.running)
        socket.write(body.slice(5))
        await closed
        assert.match(answer, /^HTTP\/1\.1 401 /, answer)
        const exit = await server.exitWithin(WAIT_MS)
        assert.equal(exit?.code, 0, server.stderr)
        assert.equal(server.lines.at(-1)?.['msg'], 'Stopped')
      },
    )
  }
})
