import { ValidationError } from '../errors.js'
import type { FieldProblem } from '../errors.js'

/**
 * Collects the problems of one request, one per field: the first message recorded for a field
 * wins, so a specific check that runs early (control characters, unknown field) is not buried
 * under a generic one. Every field with a problem is kept (D10).
 */
export class ProblemList {
  // Made on the first problem: most requests have none, and every list query makes a list.
  #messages: Map<string, string> | undefined

  /** Records a problem unless the field already has one. */
  add(field: string, message: string): void {
    this.#messages ??= new Map()
    if (!this.#messages.has(field)) this.#messages.set(field, message)
  }

  /** Records each problem in order. */
  addAll(problems: readonly FieldProblem[]): void {
    for (const problem of problems) this.add(problem.field, problem.message)
  }

  /** True when the field already has a problem. */
  has(field: string): boolean {
    return this.#messages?.has(field) ?? false
  }

  /** @throws ValidationError `validation_failed` listing every problem, when there is any. */
  throwIfAny(): void {
    if (this.#messages === undefined) return
    const details = [...this.#messages].map(([field, message]) => ({ field, message }))
    throw new ValidationError(details)
  }
}
