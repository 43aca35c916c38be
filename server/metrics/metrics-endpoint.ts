import { createHash, timingSafeEqual } from 'node:crypto'
import { bearerToken } from '../bearer-token.js'
import type { ServerMetrics } from './server-metrics.js'

/**
 * How the server exposes its metrics at `GET /metrics`, outside the API's base path, like the
 * probes: not rate limited, no API token. Without these options the path is a 404 and nothing
 * is counted.
 */
export interface MetricsOptions {
  /** Counts the requests and answers the scrapes. */
  readonly collector: ServerMetrics
  /**
   * When set, a scrape must bring `Authorization: Bearer <token>`; any other gets 401
   * `invalid_token`. Compared in constant time.
   */
  readonly token?: string | undefined
}

/** Who may read the metrics: anybody, or whoever brings the operator's token. */
export class MetricsEndpoint {
  readonly collector: ServerMetrics
  readonly #digest: Buffer | undefined

  /** @throws TypeError when `token` is given but empty. */
  constructor(options: MetricsOptions) {
    this.collector = options.collector
    const token = options.token
    if (token !== undefined && (typeof token !== 'string' || token.trim() === '')) {
      throw new TypeError('the metrics token must not be empty')
    }
    this.#digest = token === undefined ? undefined : digest(token)
  }

  /** Whether a scrape with this `Authorization` header may read the metrics. */
  admits(authorization: string | undefined): boolean {
    if (this.#digest === undefined) return true
    const token = bearerToken(authorization)
    // Digests of equal length, so that the comparison tells nothing of the token's length.
    return token !== undefined && timingSafeEqual(digest(token), this.#digest)
  }
}

function digest(token: string): Buffer {
  return createHash('sha256').update(token).digest()
}
