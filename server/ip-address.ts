/**
 * IP addresses and CIDR ranges, parsed once so that matching a request's hops is a few integer
 * comparisons. IPv4-mapped IPv6 addresses (`::ffff:192.0.2.1`) are treated as the IPv4 address
 * they carry, as a dual-stack socket reports IPv4 peers that way.
 */

/** A parsed address: IPv4 as one unsigned 32-bit number, IPv6 as eight 16-bit groups. */
export type IpAddress =
  | { readonly version: 4; readonly value: number }
  | { readonly version: 6; readonly groups: readonly number[] }

/** An address range: the first `prefix` bits of `base`. */
export interface IpRange {
  readonly base: IpAddress
  readonly prefix: number
}

/** Parses an IPv4 or IPv6 address (an IPv6 zone such as `%eth0` is dropped); `undefined` if invalid. */
export function parseIpAddress(text: string): IpAddress | undefined {
  if (text.includes(':')) {
    const zone = text.indexOf('%')
    const groups = parseIpv6(zone === -1 ? text : text.slice(0, zone))
    if (groups === undefined) return undefined
    if (isV4Mapped(groups)) {
      return { version: 4, value: ((groups[6]! << 16) | groups[7]!) >>> 0 }
    }
    return { version: 6, groups }
  }
  const value = parseIpv4(text)
  return value === undefined ? undefined : { version: 4, value }
}

/** The canonical text of an address: dotted IPv4, or RFC 5952 IPv6 (lower case, `::` compression). */
export function formatIpAddress(address: IpAddress): string {
  if (address.version === 4) {
    const v = address.value
    return `${v >>> 24}.${(v >>> 16) & 255}.${(v >>> 8) & 255}.${v & 255}`
  }
  const groups = address.groups
  let bestStart = -1
  let bestLength = 1
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++
      continue
    }
    let j = i
    while (j < 8 && groups[j] === 0) j++
    if (j - i > bestLength) {
      bestStart = i
      bestLength = j - i
    }
    i = j
  }
  const hex = groups.map((g) => g.toString(16))
  if (bestStart === -1) return hex.join(':')
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`
}

/**
 * Canonical text of an address as a transport reports it, or the text unchanged when it is not
 * an address. IPv4 text, the common case, is returned without parsing.
 */
export function canonicalIp(text: string): string {
  if (!text.includes(':')) return text
  const parsed = parseIpAddress(text)
  return parsed === undefined ? text : formatIpAddress(parsed)
}

/**
 * Parses `10.0.0.0/8`, `fd00::/8`, or a single address (a range of one).
 * @throws TypeError when the text is neither.
 */
export function parseIpRange(text: string): IpRange {
  const slash = text.indexOf('/')
  const base = parseIpAddress(slash === -1 ? text : text.slice(0, slash))
  if (base === undefined) throw new TypeError(`not an IP address or CIDR range: ${text}`)
  const max = base.version === 4 ? 32 : 128
  if (slash === -1) return { base, prefix: max }
  const digits = text.slice(slash + 1)
  let prefix = /^[0-9]{1,3}$/.test(digits) ? Number(digits) : NaN
  // An IPv4-mapped range (::ffff:10.0.0.0/104) counts its prefix over 128 bits.
  if (base.version === 4 && text.slice(0, slash).includes(':')) prefix -= 96
  if (!(prefix >= 0 && prefix <= max)) throw new TypeError(`invalid prefix length: ${text}`)
  return { base, prefix }
}

/** Whether `address` lies in `range`. Addresses of the other IP version never match. */
export function rangeContains(range: IpRange, address: IpAddress): boolean {
  const base = range.base
  if (base.version === 4) {
    if (address.version !== 4) return false
    if (range.prefix === 0) return true
    const shift = 32 - range.prefix
    return base.value >>> shift === address.value >>> shift
  }
  if (address.version !== 6) return false
  let bits = range.prefix
  for (let i = 0; i < 8 && bits > 0; i++, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff
    if ((base.groups[i]! & mask) !== (address.groups[i]! & mask)) return false
  }
  return true
}

function parseIpv4(text: string): number | undefined {
  const parts = text.split('.')
  if (parts.length !== 4) return undefined
  let value = 0
  for (const part of parts) {
    if (part.length === 0 || part.length > 3) return undefined
    let n = 0
    for (let i = 0; i < part.length; i++) {
      const c = part.charCodeAt(i) - 48
      if (c < 0 || c > 9) return undefined
      n = n * 10 + c
    }
    if (n > 255) return undefined
    value = value * 256 + n
  }
  return value
}

function parseIpv6(text: string): number[] | undefined {
  const double = text.indexOf('::')
  if (double !== -1 && text.indexOf('::', double + 1) !== -1) return undefined
  const head = double === -1 ? text : text.slice(0, double)
  const tail = double === -1 ? '' : text.slice(double + 2)
  const left = parseGroups(head)
  const right = parseGroups(tail)
  if (left === undefined || right === undefined) return undefined
  const missing = 8 - left.length - right.length
  if (double === -1 ? missing !== 0 : missing < 1) return undefined
  return [...left, ...new Array<number>(missing).fill(0), ...right]
}

function parseGroups(text: string): number[] | undefined {
  if (text === '') return []
  const parts = text.split(':')
  const groups: number[] = []
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!
    if (i === parts.length - 1 && part.includes('.')) {
      const v4 = parseIpv4(part)
      if (v4 === undefined) return undefined
      groups.push(v4 >>> 16, v4 & 0xffff)
      continue
    }
    if (!/^[0-9a-fA-F]{1,4}$/.test(part)) return undefined
    groups.push(parseInt(part, 16))
  }
  return groups
}

function isV4Mapped(groups: readonly number[]): boolean {
  return (
    groups[0] === 0 &&
    groups[1] === 0 &&
    groups[2] === 0 &&
    groups[3] === 0 &&
    groups[4] === 0 &&
    groups[5] === 0xffff
  )
}
