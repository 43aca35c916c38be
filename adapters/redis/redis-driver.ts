/**
 * The slice of node-redis (`@redis/client`) the adapter uses, typed here so that the adapter's
 * types do not need the package: a node-redis client fits {@link RedisCommandClient}, and so
 * does any client with the same method.
 */

/** Options of one command, as node-redis's `sendCommand` takes them. */
export interface RedisCommandOptions {
  /**
   * Milliseconds after which the command is given up: its promise rejects and, if it was not
   * yet written, it is never sent.
   */
  readonly timeout?: number
}

/** What the store needs of a client: one raw command, answered with its reply. */
export interface RedisCommandClient {
  /**
   * Sends `args` (the command's name, then its arguments) and resolves with the reply: an
   * integer as a number, a bulk string as a string, an array as an array. Rejects with the
   * server's error reply (whose message starts with its code, `NOSCRIPT …`) or when the client
   * cannot send it.
   */
  sendCommand(args: string[], options?: RedisCommandOptions): Promise<unknown>
}

/** The client `openRedisRateLimitStore` makes and owns (node-redis's `RedisClientType`). */
export interface RedisOwnedClient extends RedisCommandClient {
  /** Whether the connection is up and the client answers commands. */
  readonly isReady: boolean
  /** Connects; resolves once ready, and keeps reconnecting after a loss. */
  connect(): Promise<unknown>
  /** Waits for the commands sent, then closes the connection. */
  close(): Promise<void>
  /** Closes the connection at once, rejecting the commands still waiting. */
  destroy(): void
  on(event: 'error', listener: (error: unknown) => void): unknown
  off(event: 'error', listener: (error: unknown) => void): unknown
}

/** What the adapter needs of the module: node-redis's `createClient`. */
export interface RedisModule {
  createClient(options: Record<string, unknown>): RedisOwnedClient
}

/** The packages tried, in order: the client alone, then the `redis` package that bundles it. */
const PACKAGES = ['@redis/client', 'redis']

/**
 * Loads node-redis, an optional peer dependency: a host that keeps its limits in process never
 * loads it.
 * @throws Error naming the package to install when neither `@redis/client` nor `redis` is there.
 */
export async function loadRedis(): Promise<RedisModule> {
  const failures: unknown[] = []
  for (const name of PACKAGES) {
    let loaded: { default?: Partial<RedisModule> } & Partial<RedisModule>
    try {
      // A variable, not a literal: the compiler must not require the package's types.
      loaded = (await import(name)) as typeof loaded
    } catch (error) {
      failures.push(error)
      continue
    }
    const module = typeof loaded.createClient === 'function' ? loaded : loaded.default
    if (typeof module?.createClient === 'function') return module as RedisModule
    failures.push(new Error(`"${name}" does not export createClient`))
  }
  throw new Error(
    'The Redis rate-limit store needs the "@redis/client" package (node-redis 6): npm install @redis/client',
    { cause: new AggregateError(failures) },
  )
}
