import {
  createConnection,
  createServer,
  type AddressInfo,
  type Server,
  type Socket,
} from 'node:net'

/**
 * A TCP proxy on 127.0.0.1 in front of a real server that can be frozen: while frozen, its
 * connections stay open but nothing passes either way, as with a server that hangs (a Redis
 * stuck on a slow command or a dead host behind a silent network). Thawed, what was held
 * passes on, in order. Only the connections through it are affected, not the server's other
 * clients.
 */
export class FreezableProxy {
  readonly #server: Server
  readonly #sockets = new Set<Socket>()
  /** Bytes held while frozen, with the socket each is for, in arrival order. */
  #held: [Socket, Buffer][] = []
  #frozen = false

  private constructor(server: Server) {
    this.#server = server
  }

  /** Starts a proxy to `host:port` on an ephemeral port of 127.0.0.1. */
  static async start(host: string, port: number): Promise<FreezableProxy> {
    const server = createServer()
    const proxy = new FreezableProxy(server)
    server.on('connection', (client) => proxy.#connect(client, host, port))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    return proxy
  }

  /** The port to connect to. */
  get port(): number {
    return (this.#server.address() as AddressInfo).port
  }

  /** Holds every byte, both ways, until `thaw()`. */
  freeze(): void {
    this.#frozen = true
  }

  /** Lets bytes pass again, the held ones first. */
  thaw(): void {
    this.#frozen = false
    const held = this.#held
    this.#held = []
    for (const [to, bytes] of held) if (!to.destroyed) to.write(bytes)
  }

  /** Closes the proxy and every connection through it. */
  async close(): Promise<void> {
    for (const socket of this.#sockets) socket.destroy()
    await new Promise<void>((resolve) => this.#server.close(() => resolve()))
  }

  #connect(client: Socket, host: string, port: number): void {
    const upstream = createConnection({ host, port })
    this.#forward(client, upstream)
    this.#forward(upstream, client)
  }

  #forward(from: Socket, to: Socket): void {
    this.#sockets.add(from)
    from.on('data', (bytes: Buffer) => {
      if (this.#frozen) this.#held.push([to, bytes])
      else to.write(bytes)
    })
    const end = (): void => {
      this.#sockets.delete(from)
      from.destroy()
      to.destroy()
    }
    from.on('error', end).on('close', end)
  }
}
