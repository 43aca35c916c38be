import { base64url, type CryptoKey } from 'jose'
import { utf8Encoder } from './utf8.js'

// The Web Crypto API is a global in every runtime the core supports (Node 20+, Deno, Bun,
// browsers); core's type check runs without DOM or Node types, so the slice it uses is typed here.
interface WebCrypto {
  getRandomValues<T extends Uint8Array>(array: T): T
  subtle: {
    digest(algorithm: 'SHA-256', data: Uint8Array): Promise<ArrayBuffer>
    importKey(
      format: 'raw',
      keyData: Uint8Array,
      algorithm: { name: 'HMAC'; hash: 'SHA-256' },
      extractable: false,
      usages: ('sign' | 'verify')[],
    ): Promise<HmacKey>
  }
}

/** An imported HMAC key, as jose takes it. */
export type HmacKey = CryptoKey

const webCrypto = (globalThis as unknown as { crypto: WebCrypto }).crypto

/** `bytes` random bytes from the CSPRNG, base64url without padding. */
export function randomToken(bytes: number): string {
  return base64url.encode(webCrypto.getRandomValues(new Uint8Array(bytes)))
}

/** SHA-256 of a UTF-8 string, base64url without padding; synchronous or not. */
export type Sha256 = (text: string) => string | Promise<string>

/** SHA-256 of a UTF-8 string, base64url without padding. */
export async function sha256(text: string): Promise<string> {
  const digest = await webCrypto.subtle.digest('SHA-256', utf8Encoder.encode(text))
  return base64url.encode(new Uint8Array(digest))
}

/** Compares two strings in time that depends only on their lengths. */
export function constantTimeEqual(a: string, b: string): boolean {
  let difference = a.length ^ b.length
  const length = Math.max(a.length, b.length)
  for (let i = 0; i < length; i++) {
    difference |= (a.charCodeAt(i) | 0) ^ (b.charCodeAt(i) | 0)
  }
  return difference === 0
}

/** Imports a base64url secret as an HMAC-SHA-256 key for jose. */
export function importHmacKey(secret: string): Promise<HmacKey> {
  return webCrypto.subtle.importKey(
    'raw',
    base64url.decode(secret),
    { name: 'HMAC', hash: 'SHA-256' },
    false,
    ['sign', 'verify'],
  )
}

/** Decoded length in bytes of a base64url string, or -1 when it is not base64url. */
export function base64urlByteLength(text: string): number {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return -1
  try {
    return base64url.decode(text).length
  } catch {
    return -1
  }
}
