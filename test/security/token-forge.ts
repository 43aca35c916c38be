import { createHmac } from 'node:crypto'
import {
  base64url,
  FlattenedSign,
  SignJWT,
  type JWTPayload,
  type ProtectedHeaderParameters,
} from 'jose'

/** A header or claims change: a key set to `undefined` is removed, any other value replaces. */
export type Patch = Readonly<Record<string, unknown>>

type Key = Parameters<SignJWT['sign']>[0]

function patched(base: Record<string, unknown>, patch: Patch = {}): Record<string, unknown> {
  const result: Record<string, unknown> = { ...base, ...patch }
  for (const [name, value] of Object.entries(patch)) if (value === undefined) delete result[name]
  return result
}

/**
 * Builds access tokens that differ from a genuine one in exactly one property: the genuine
 * header (`alg`, `typ`, `kid`) and claims (`iss`, `aud`, `sub`, `scope`, `sid`) come from a
 * token the service issued, and each token gets a fresh `jti`, `iat` now and `exp` in ten minutes.
 */
export class TokenForge {
  readonly #header: Record<string, unknown>
  readonly #claims: Record<string, unknown>
  readonly #secret: Uint8Array
  readonly #nowSeconds: () => number
  #serial = 0

  /**
   * @param header The protected header of a genuine token.
   * @param claims The claims of a genuine token (its session is live).
   * @param secret The service's signing secret, base64url.
   * @param now The service's clock, epoch ms.
   */
  constructor(
    header: ProtectedHeaderParameters,
    claims: JWTPayload,
    secret: string,
    now: () => number,
  ) {
    this.#header = { alg: header.alg, typ: header.typ, kid: header.kid }
    this.#claims = {
      iss: claims.iss,
      aud: claims.aud,
      sub: claims.sub,
      scope: claims['scope'],
      sid: claims['sid'],
    }
    this.#secret = base64url.decode(secret)
    this.#nowSeconds = () => Math.floor(now() / 1000)
  }

  /** The genuine signing secret, as bytes. */
  get secret(): Uint8Array {
    return this.#secret
  }

  /** The genuine header with `patch` applied. */
  header(patch?: Patch): Record<string, unknown> {
    return patched(this.#header, patch)
  }

  /** Genuine claims with a fresh `jti`, `iat` now and `exp` in ten minutes, then `patch`. */
  claims(patch?: Patch): Record<string, unknown> {
    const now = this.#nowSeconds()
    const fresh = { jti: `forged-${++this.#serial}`, iat: now, exp: now + 600 }
    return patched({ ...this.#claims, ...fresh }, patch)
  }

  /** Signed by jose with `key` (the genuine secret by default); `crit` names understood extensions. */
  sign(
    options: { header?: Patch; claims?: Patch; key?: Key; crit?: Record<string, boolean> } = {},
  ): Promise<string> {
    return new SignJWT(this.claims(options.claims))
      .setProtectedHeader(
        this.header(options.header) as unknown as ProtectedHeaderParameters & {
          alg: string
        },
      )
      .sign(options.key ?? this.#secret, options.crit === undefined ? {} : { crit: options.crit })
  }

  /**
   * Signed by jose with the genuine secret as a JWS with an unencoded payload (RFC 7797:
   * `b64: false`, `crit: ["b64"]`), which jose will not build as a JWT.
   */
  async unencoded(): Promise<string> {
    const payload = new TextEncoder().encode(JSON.stringify(this.claims()))
    const jws = await new FlattenedSign(payload)
      .setProtectedHeader({ ...this.header(), b64: false, crit: ['b64'] } as unknown as {
        alg: string
      })
      .sign(this.#secret)
    return `${jws.protected!}.${jws.payload}.${jws.signature}`
  }

  /**
   * Encoded by hand, for what jose refuses to produce (`alg: none`, a lower-case `alg`, a
   * non-string `kid`): the signature is HMAC-SHA-256 with `key`, or empty when `key` is null.
   */
  raw(header: Patch, claims: Patch, key: Uint8Array | null = this.#secret): string {
    const input = `${encodeJson(header)}.${encodeJson(claims)}`
    if (key === null) return `${input}.`
    return `${input}.${createHmac('sha256', key).update(input).digest('base64url')}`
  }
}

function encodeJson(value: unknown): string {
  return base64url.encode(JSON.stringify(value))
}

/** `token` with bit `bit` of its decoded signature flipped (re-encoded canonically). */
export function flipSignatureBit(token: string, bit: number): string {
  const [head, body, signature] = token.split('.') as [string, string, string]
  const bytes = base64url.decode(signature)
  const index = bit >> 3
  bytes[index] = bytes[index]! ^ (1 << (bit & 7))
  return `${head}.${body}.${base64url.encode(bytes)}`
}

/**
 * `token` with the unused low bits of its signature's last character set: another spelling of
 * the same bytes (an HS256 signature is 32 bytes, 43 characters, two bits unused).
 */
export function withUnusedBitsSet(token: string): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'
  const last = alphabet.indexOf(token.at(-1)!)
  return token.slice(0, -1) + alphabet[last | 0b11]!
}
