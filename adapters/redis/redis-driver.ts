import { importWithPeers, type PeerPackage } from '../../core/missing-peer-dependency-error.js'

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

/** The package the Redis store loads, which the host installs (an optional peer dependency). */
export const REDIS_PEERS: readonly PeerPackage[] = Object.freeze([
  { name: '@redis/client', range: '^6.3.1' },
])

/**
 * Loads node-redis's client, an optional peer dependency: a host that keeps its limits in
 * process never loads it.
 * @throws MissingPeerDependencyError naming the package when `@redis/client` is not installed.
 */
export async function loadRedis(): Promise<RedisModule> {
  const name = REDIS_PEERS[0]!.name
  // A variable, not a literal: the compiler must not require the package's types.
  const loaded = (await importWithPeers(
    'the Redis rate-limit store (beneficiary-service/redis)',
    REDIS_PEERS,
    () => import(name),
  )) as { default?: Partial<RedisModule> } & Partial<RedisModule>
  const module = typeof loaded.createClient === 'function' ? loaded : loaded.default
  if (typeof module?.createClient !== 'function') {
    throw new Error(
      `"${name}" does not export createClient: install ${name}@${REDIS_PEERS[0]!.range}`,
    )
  }
  return module as RedisModule
}
