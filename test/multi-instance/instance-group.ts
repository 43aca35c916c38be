import assert from 'node:assert/strict'
import { setTimeout as delay } from 'node:timers/promises'
import type { CliIo } from '../../server/cli/cli-io.js'
import { runCli } from '../../server/cli/run-cli.js'
import { call, type Client, type Reply } from '../faults/fault-support.js'
import { ServeChild } from '../faults/serve-child.js'

/** What a request to one instance carries besides its method and path. */
export interface Outgoing {
  /** The caller: its access token is sent, and its IP as the balancer's `X-Forwarded-For`. */
  readonly session?: Session
  /** The client IP the balancer reports, when no session says it. */
  readonly ip?: string
  /** A token other than the session's (or without one). */
  readonly token?: string
  readonly body?: unknown
  readonly headers?: Record<string, string>
}

/** A client logged in from one IP. */
export interface Session {
  readonly client: Client
  readonly ip: string
  readonly accessToken: string
  readonly refreshToken: string
}

let addresses = 0

/**
 * A client address of its own (198.18.0.0/15, the range for network tests): each case takes
 * fresh ones, so that no auth bucket carries over from one case to the next and no case waits
 * for a window to pass.
 */
export function freshIp(): string {
  const n = addresses++
  return `198.18.${Math.floor(n / 250)}.${(n % 250) + 1}`
}

/**
 * Several `beneficiaries serve` processes on one database, as behind a balancer: each trusts
 * the loopback "balancer" (the test), so the client address a request carries in
 * `X-Forwarded-For` is the one its auth limit keys on.
 */
export class InstanceGroup {
  readonly servers: ServeChild[]
  /** The PostgreSQL URL the instances share. */
  readonly database: string
  readonly #env: Readonly<Record<string, string>>
  #turn = 0

  private constructor(
    database: string,
    env: Readonly<Record<string, string>>,
    servers: ServeChild[],
  ) {
    this.database = database
    this.#env = env
    this.servers = servers
  }

  /** Starts `count` instances on `database` together (they race for the signing key, D3). */
  static async start(
    database: string,
    count: number,
    env: Readonly<Record<string, string>>,
  ): Promise<InstanceGroup> {
    const started = await Promise.allSettled(
      Array.from({ length: count }, () => ServeChild.start(database, env)),
    )
    const servers = started.flatMap((result) =>
      result.status === 'fulfilled' ? [result.value] : [],
    )
    const failed = started.find((result) => result.status === 'rejected')
    if (failed !== undefined) {
      await Promise.all(servers.map((server) => server.kill()))
      throw failed.reason
    }
    return new InstanceGroup(database, env, servers)
  }

  /** The indexes of the instances still running. */
  get running(): number[] {
    return this.servers.flatMap((server, i) => (server.running ? [i] : []))
  }

  /** The next running instance in turn: requests spread round-robin, as a balancer does. */
  next(): number {
    const running = this.running
    assert.ok(running.length > 0, 'no instance runs')
    return running[this.#turn++ % running.length]!
  }

  /** Sends one request to instance `i`. */
  send(i: number, method: string, path: string, outgoing: Outgoing = {}): Promise<Reply> {
    const ip = outgoing.session?.ip ?? outgoing.ip
    const token = outgoing.token ?? outgoing.session?.accessToken
    return call(this.servers[i]!.url, method, path, {
      ...(token !== undefined && { token }),
      ...(outgoing.body !== undefined && { body: outgoing.body }),
      headers: { ...(ip !== undefined && { 'x-forwarded-for': ip }), ...outgoing.headers },
    })
  }

  /** Logs `client` in on instance `i` from `ip`. */
  async signIn(i: number, client: Client, ip = freshIp()): Promise<Session> {
    const reply = await this.send(i, 'POST', '/v3/auth/login', { ip, body: client })
    assert.equal(reply.status, 200, reply.body)
    return {
      client,
      ip,
      accessToken: String(reply.json!['access_token']),
      refreshToken: String(reply.json!['refresh_token']),
    }
  }

  /** Provisions `count` clients and logs each in from an address of its own, round-robin. */
  async signInMany(count: number): Promise<Session[]> {
    const clients = await provision(this.database, count)
    return Promise.all(clients.map((client) => this.signIn(this.next(), client)))
  }

  /** Resolves once every running instance answers `/readyz` with `ready`; fails after `withinMs`. */
  async allReady(withinMs: number): Promise<void> {
    const deadline = performance.now() + withinMs
    for (const i of this.running) {
      while ((await this.send(i, 'GET', '/readyz')).body !== '{"status":"ready"}') {
        assert.ok(performance.now() < deadline, `instance ${i} not ready within ${withinMs} ms`)
        await delay(100)
      }
    }
  }

  /** Starts instance `i` again (a new process on a new port) after it exited. */
  async restart(i: number): Promise<void> {
    assert.ok(!this.servers[i]!.running, `instance ${i} still runs`)
    this.servers[i] = await ServeChild.start(this.database, this.#env)
  }

  /** Stops every instance with SIGTERM (SIGKILL past the deadline); resolves once all exited. */
  async stop(): Promise<void> {
    await Promise.all(this.servers.map((server) => server.kill('SIGTERM')))
  }
}

/** Runs the CLI in this process, as an operator would on the database; resolves with its output. */
export async function operator(database: string, args: readonly string[]): Promise<string> {
  const out: string[] = []
  const err: string[] = []
  const io: CliIo = {
    env: {},
    out: (text) => void out.push(text),
    err: (text) => void err.push(text),
    signals: { once: () => undefined },
  }
  const status = await runCli([...args, '--database-url', database], io)
  assert.equal(status, 0, err.join('\n'))
  return out.join('\n')
}

/** Provisions `count` read-write clients with `clients create`. */
export async function provision(database: string, count: number): Promise<Client[]> {
  const clients: Client[] = []
  // A few at a time: each command opens a pool of its own on a server others use too.
  for (let n = 0; n < count; n += 4) {
    const batch = Array.from({ length: Math.min(4, count - n) }, async () => {
      const out = await operator(database, ['clients', 'create', '--name', 'multi-instance'])
      return JSON.parse(out) as Client
    })
    clients.push(...(await Promise.all(batch)))
  }
  return clients
}
