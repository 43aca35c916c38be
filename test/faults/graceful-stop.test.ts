import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, describe, it } from 'node:test'
import { call, checkIntegrity, createClient, login, readOnly } from './fault-support.js'
import { ServeChild } from './serve-child.js'
import { skipOn, TRANSPORTS } from '../support/transports.js'

/** A request written by hand on its own connection, so that its body can arrive as slowly as a test wants. */
class RawRequest {
  readonly socket: Socket
  /** Everything the server sent, once it closed the connection. */
  readonly answer: Promise<{ readonly text: string; readonly closedAt: number }>

  constructor(port: number) {
    this.socket = connect(port, '127.0.0.1')
    this.socket.setEncoding('latin1')
    let text = ''
    this.socket.on('data', (chunk: string) => (text += chunk))
    this.socket.on('error', () => undefined)
    this.answer = new Promise((resolve) =>
      this.socket.on('close', () => resolve({ text, closedAt: performance.now() })),
    )
  }

  /** Sends the head of a create and the first `sent` bytes of its body; returns the rest of the body. */
  async startCreate(token: string, body: string, sent: number): Promise<string> {
    await new Promise<void>((resolve, reject) => {
      this.socket.once('connect', resolve)
      this.socket.once('error', reject)
    })
    this.socket.write(
      `POST /v3/beneficiaries HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, sent)}`,
    )
    return body.slice(sent)
  }
}

/** How a new connection to `port` fares: `connected`, an error code such as ECONNREFUSED, or `timeout`. */
function tryConnect(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1')
    const timer = setTimeout(() => {
      socket.destroy()
      resolve('timeout')
    }, 5_000)
    socket.once('connect', () => {
      clearTimeout(timer)
      socket.destroy()
      resolve('connected')
    })
    socket.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer)
      resolve(error.code ?? 'error')
    })
  })
}

/** Waits for `promise`, failing the test after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, late])
  } finally {
    clearTimeout(timer)
  }
}

for (const transport of TRANSPORTS) {
  describe(`graceful stop on SIGTERM (${transport})`, { skip: skipOn(transport) }, () => {
    const directory = mkdtempSync(join(tmpdir(), `faults-stop-${transport}-`))
    const servers: ServeChild[] = []
    const sockets: Socket[] = []
    after(async () => {
      for (const socket of sockets) socket.destroy()
      for (const server of servers) await server.kill()
      rmSync(directory, { recursive: true, force: true })
    })

    it('finishes a slow write in flight, refuses new connections, closes the database and exits 0 long before the deadline', async () => {
      const db = join(directory, 'drain.sqlite')
      const client = await createClient(db)
      const server = await ServeChild.start(db, {
        TRANSPORT: transport,
        SHUTDOWN_GRACE_SECONDS: '10',
      })
      servers.push(server)
      const token = await login(server.url, client)
      const slow = new RawRequest(server.port)
      sockets.push(slow.socket)
      const rest = await slow.startCreate(
        token,
        JSON.stringify({
          first_name: 'Slow',
          last_name: 'Writer',
          email: 'slow.writer@example.org',
        }),
        20,
      )
      // Answered after the slow request's head was read: that request is in flight.
      assert.equal((await call(server.url, 'GET', '/healthz')).status, 200)

      server.child.kill('SIGTERM')
      await server.waitFor((line) => line['signal'] === 'SIGTERM')
      assert.equal(await tryConnect(server.port), 'ECONNREFUSED', 'a new connection after SIGTERM')
      assert.ok(server.running, 'the process waits for the request in flight')

      slow.socket.write(rest)
      const sentAt = performance.now()
      const answer = await within(slow.answer, 10_000, 'the slow request')
      assert.match(answer.text, /^HTTP\/1\.1 201 /, answer.text)
      // Answered, and told (then shown, by the close) that the connection ends with it.
      assert.match(answer.text, /\r\nConnection: close\r\n/i)
      const exit = await within(server.exited, 10_000, 'exit')
      assert.equal(exit.code, 0, server.stderr)
      assert.ok(
        exit.at - sentAt < 5_000,
        `exited ${Math.round(exit.at - sentAt)} ms after the request could finish`,
      )
      await server.waitFor((line) => line['msg'] === 'Stopped', 1_000)
      assert.deepEqual(server.errors, [])

      // The write was committed, and the database closed cleanly (the last connection to close
      // a WAL database checkpoints it and removes the WAL file).
      assert.equal(existsSync(`${db}-wal`), false, 'the WAL file is gone: the database was closed')
      assert.equal(checkIntegrity(db).integrity, 'ok')
      const emails = readOnly(db, (handle) =>
        handle.prepare('SELECT email FROM beneficiaries').pluck().all(),
      )
      assert.deepEqual(emails, ['slow.writer@example.org'])
    })

    it('does not let a request that outlives the grace period keep the process alive past the deadline', async () => {
      const db = join(directory, 'deadline.sqlite')
      const client = await createClient(db)
      const graceMs = 1_000
      const server = await ServeChild.start(db, {
        TRANSPORT: transport,
        SHUTDOWN_GRACE_SECONDS: String(graceMs / 1000),
      })
      servers.push(server)
      const token = await login(server.url, client)
      const stuck = new RawRequest(server.port)
      sockets.push(stuck.socket)
      await stuck.startCreate(
        token,
        JSON.stringify({ first_name: 'Never', last_name: 'Finished', email: 'never@example.org' }),
        10,
      )
      assert.equal((await call(server.url, 'GET', '/healthz')).status, 200)

      const signalledAt = performance.now()
      server.child.kill('SIGTERM')
      const exit = await within(server.exited, graceMs + 8_000, 'exit past the deadline')
      const took = exit.at - signalledAt
      assert.equal(exit.code, 0, server.stderr)
      // It waited for the request (the grace period), then did not wait longer than it takes to close.
      assert.ok(
        took >= graceMs * 0.9,
        `exited after ${Math.round(took)} ms, before the grace period ended`,
      )
      assert.ok(
        took < graceMs + 4_000,
        `exited ${Math.round(took)} ms after SIGTERM, past the deadline`,
      )
      const answer = await within(stuck.answer, 5_000, 'the stuck connection')
      assert.doesNotMatch(answer.text, /^HTTP\/1\.1 2/, 'the unfinished request was not served')
      assert.equal(checkIntegrity(db).integrity, 'ok')
      assert.equal(
        readOnly(db, (handle) =>
          handle.prepare('SELECT count(*) FROM beneficiaries').pluck().get(),
        ),
        0,
      )
    })
  })
}
