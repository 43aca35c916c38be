import {
  canonicalIp,
  formatIpAddress,
  parseIpAddress,
  parseIpRange,
  rangeContains,
  type IpAddress,
  type IpRange,
} from './ip-address.js'

const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
}

/**
 * Finds the client's IP address (D21): the socket peer, unless the operator named trusted
 * proxies. Only when the peer is one of them is `X-Forwarded-For` read, right to left, skipping
 * trusted hops; the first untrusted hop is the client. Entries left of it were written by the
 * client itself and are never believed, so a spoofed left-most entry changes nothing.
 *
 * @example
 * const resolver = new ClientIpResolver(['10.0.0.0/8', 'loopback'])
 * resolver.resolve('10.0.0.7', '198.51.100.4, 10.0.0.9') // '198.51.100.4'
 */
export class ClientIpResolver {
  readonly #ranges: readonly IpRange[]

  /**
   * @param trusted IP addresses and CIDR ranges of trusted proxies (IPv4 and IPv6), or the
   *   names `loopback`, `private` and `linklocal`. Empty: `X-Forwarded-For` is ignored.
   * @throws TypeError naming the first entry that is not an address or range.
   */
  constructor(trusted: readonly string[] = []) {
    const ranges: IpRange[] = []
    for (const entry of trusted) {
      const text = entry.trim()
      if (text === '') continue
      for (const item of NAMED_RANGES[text.toLowerCase()] ?? [text]) ranges.push(parseIpRange(item))
    }
    this.#ranges = Object.freeze(ranges)
  }

  /** Whether any proxy is trusted (if not, `X-Forwarded-For` is never read). */
  get trustsProxies(): boolean {
    return this.#ranges.length > 0
  }

  /** The client's address, in canonical text form, for a request from `peer`. */
  resolve(peer: string, forwardedFor: string | undefined): string {
    if (this.#ranges.length === 0 || forwardedFor === undefined) return canonicalIp(peer)
    const peerAddress = parseIpAddress(peer)
    if (peerAddress === undefined || !this.#trusted(peerAddress)) return canonicalIp(peer)
    let client: IpAddress = peerAddress
    const hops = forwardedFor.split(',')
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = parseIpAddress(stripPort(hops[i]!.trim()))
      // Every hop examined here was written by a trusted proxy; one it could not name ends the walk.
      if (hop === undefined) break
      client = hop
      if (!this.#trusted(hop)) break
    }
    return formatIpAddress(client)
  }

  #trusted(address: IpAddress): boolean {
    for (const range of this.#ranges) if (rangeContains(range, address)) return true
    return false
  }
}

function stripPort(hop: string): string {
  if (hop.startsWith('[')) {
    const end = hop.indexOf(']')
    return end === -1 ? hop : hop.slice(1, end)
  }
  const colon = hop.indexOf(':')
  // One colon: IPv4 with a port. Several: a bare IPv6 address.
  return colon !== -1 && hop.indexOf(':', colon + 1) === -1 ? hop.slice(0, colon) : hop
}
