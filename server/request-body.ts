import type { UnparsedBody } from '../core/beneficiary-service.js'
import { BadRequestError } from '../core/errors.js'
import type { ApiRequest } from './api-request.js'
import { STATUS_BY_CODE, STATUS_BY_HTTP_CODE, type HttpErrorCode } from './error-status.js'
import { isJsonContentType, parseJsonBody } from './json-body.js'

const NO_BODY: UnparsedBody = () => undefined

/** Why a body cannot reach the service: the status and the standard body's fields (D12). */
export class BodyRefusal {
  readonly status: number
  readonly code: HttpErrorCode | 'bad_request'
  readonly message: string

  constructor(code: HttpErrorCode | 'bad_request', message: string) {
    this.code = code
    this.status = code === 'bad_request' ? STATUS_BY_CODE[code] : STATUS_BY_HTTP_CODE[code]
    this.message = message
  }
}

const TOO_LARGE = new BodyRefusal('payload_too_large', 'The request body is larger than 1 MiB.')
const TIMED_OUT = new BodyRefusal('request_timeout', 'The request body did not arrive in time.')
const NOT_JSON = new BodyRefusal(
  'unsupported_media_type',
  'The request body must be application/json.',
)

/**
 * The JSON body of a request as the service takes it, parsed only when the service asks, or why
 * it cannot reach the service. `takesBody` is whether the route's operation takes one.
 */
export function readBody(request: ApiRequest, takesBody: boolean): UnparsedBody | BodyRefusal {
  if (request.bodyError !== undefined)
    return request.bodyError === 'timeout' ? TIMED_OUT : TOO_LARGE
  const bytes = request.body
  if (bytes === undefined || bytes.byteLength === 0) return NO_BODY
  if (!isJsonContentType(request.headers['content-type'])) return NOT_JSON
  // A JSON body on an operation that takes none (GET, DELETE) is ignored, as HTTP allows.
  if (!takesBody) return NO_BODY
  // Parsed only once the service has admitted the request (token and limit), not before.
  return () => {
    const parsed = parseJsonBody(bytes)
    if (!parsed.ok) throw new BadRequestError(parsed.message)
    return parsed.value
  }
}

/** What a route that takes a body as it is (`uploads`) is given: its media type and bytes. */
export interface Upload {
  readonly contentType: string
  readonly bytes: Uint8Array
}

const EMPTY_UPLOAD = new Uint8Array(0)
const FILE_TOO_LARGE = new BodyRefusal(
  'payload_too_large',
  'The file is larger than this server takes for an import.',
)

/** The body of a route that takes one of `types` as it is (D39's files to import). */
export function readUpload(
  request: ApiRequest,
  types: readonly string[],
): UnparsedBody | BodyRefusal {
  if (request.bodyError !== undefined)
    return request.bodyError === 'timeout' ? TIMED_OUT : FILE_TOO_LARGE
  const header = request.headers['content-type'] ?? ''
  const type = header.split(';')[0]!.trim().toLowerCase()
  const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(header)?.[1]?.toLowerCase()
  if (
    !types.includes(type) ||
    (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')
  ) {
    return new BodyRefusal(
      'unsupported_media_type',
      `The request body must be ${types.join(' or ')}, in UTF-8.`,
    )
  }
  const upload: Upload = { contentType: type, bytes: request.body ?? EMPTY_UPLOAD }
  return () => upload
}
