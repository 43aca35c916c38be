import { NotFoundError } from './errors.js'

const ID = /^[1-9][0-9]{0,15}$/

/** An id from a path: a positive integer in range, else the resource cannot exist (D12). */
export function parseId(id: string | number): number {
  const value = idOf(id)
  if (value === undefined) throw new NotFoundError('The beneficiary was not found.')
  return value
}

/** The id a path names, or `undefined` when no record can have it. */
export function idOf(id: string | number): number | undefined {
  const value = typeof id === 'number' ? id : ID.test(id) ? Number(id) : NaN
  return Number.isSafeInteger(value) && value >= 1 ? value : undefined
}
