/**
 * What is logged of an unexpected error: its class, code and stack frames, but not its message,
 * which may quote a value from the request or an SQL statement (D25).
 */
export function describeError(error: unknown): object {
  if (!(error instanceof Error)) return { type: typeof error }
  const code = (error as { code?: unknown }).code
  const frames = (error.stack ?? '')
    .split('\n')
    .filter((line) => line.startsWith('    at '))
    .map((line) => line.trim())
  return { type: error.name, ...(typeof code === 'string' && { code }), frames }
}
