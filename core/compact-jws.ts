const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

/** The 6-bit value of each base64url character by its code, -1 for any other character. */
const VALUES = new Int8Array(128).fill(-1)
for (let i = 0; i < ALPHABET.length; i++) VALUES[ALPHABET.charCodeAt(i)] = i

/**
 * Whether `token` is three segments of canonical base64url (RFC 7515, 2 and 7.1; RFC 4648, 3.5):
 * the URL-safe alphabet only, no padding, no length that leaves one character over, and the
 * unused bits of the last character zero. jose decodes a trailing `=`, and a last character
 * with other unused bits, to the same bytes, so that one signed token would have several
 * spellings that all verify; only the one its signer wrote is taken.
 */
export function isCanonicalCompactJws(token: string): boolean {
  const segments = token.split('.')
  return segments.length === 3 && segments.every(isCanonicalBase64url)
}

function isCanonicalBase64url(text: string): boolean {
  let last = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    last = code < 128 ? VALUES[code]! : -1
    if (last === -1) return false
  }
  switch (text.length % 4) {
    case 1:
      return false
    case 2:
      // 12 bits for one byte: the last character's low four are unused.
      return (last & 0x0f) === 0
    case 3:
      // 18 bits for two bytes: the last character's low two are unused.
      return (last & 0x03) === 0
    default:
      return true
  }
}
