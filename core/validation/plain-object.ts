import { BadRequestError } from '../errors.js'

/** True for an object literal or a parsed JSON object: not null, an array, a Date or a class instance. */
export function isPlainObject(value: unknown): value is Readonly<Record<string, unknown>> {
  if (typeof value !== 'object' || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

/**
 * Returns the body when it is a plain JSON object.
 * @throws BadRequestError `bad_request` for anything else: an array, a string, null (D12)
 */
export function requireObjectBody(body: unknown): Readonly<Record<string, unknown>> {
  if (!isPlainObject(body)) throw new BadRequestError('The request body must be a JSON object.')
  return body
}
