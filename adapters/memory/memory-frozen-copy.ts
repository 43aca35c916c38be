/**
 * A deep copy of `value` that nobody can change: what the memory adapter keeps and hands out, so
 * that neither the caller's later edits nor edits of a returned object reach the stored state.
 */
export function frozenCopy<T>(value: T): T {
  return deepFreeze(structuredClone(value))
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child)
    Object.freeze(value)
  }
  return value
}
