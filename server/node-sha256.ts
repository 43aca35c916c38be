import { createHash } from 'node:crypto'

/**
 * SHA-256 of a UTF-8 string, base64url: the same digest as the core's Web Crypto default, but
 * synchronous, with no trip to a worker thread. Pass it as `sha256` to `createBeneficiaryService`
 * on Node.js.
 */
export function nodeSha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('base64url')
}
