/** The body itself, or what its parser returns: servers defer parsing until a request is admitted. */
export function bodyOf(body: unknown): unknown {
  return typeof body === 'function' ? (body as () => unknown)() : body
}
