import type { ApiResponse } from '../../server/api-response.js'

/** The body of a handler's answer as text, whether it came as a string or as UTF-8 bytes. */
export function bodyText(response: ApiResponse): string | undefined {
  const body = response.body
  return body === undefined || typeof body === 'string' ? body : new TextDecoder().decode(body)
}
