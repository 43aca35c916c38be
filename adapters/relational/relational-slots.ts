/** A named placeholder in a statement built once: its value is given on every run. */
class Slot {
  readonly name: string

  constructor(name: string) {
    this.name = name
  }
}

/**
 * A placeholder for the value named `name`, typed as whatever the builder expects at its place.
 * Kysely passes it through to the compiled parameters, where {@link bindSlots} finds it again.
 */
export function slot<T = never>(name: string): T {
  return new Slot(name) as unknown as T
}

/** Values of the slots of one run, by name. */
export type SlotValues = Readonly<Record<string, unknown>>

/**
 * The compiled parameters of a statement with each slot replaced by its value in `values`.
 *
 * @throws TypeError when a slot has no value.
 */
export function bindSlots(parameters: readonly unknown[], values: SlotValues): unknown[] {
  const bound = new Array<unknown>(parameters.length)
  for (let i = 0; i < bound.length; i++) {
    const parameter = parameters[i]
    if (!(parameter instanceof Slot)) {
      bound[i] = parameter
    } else if (parameter.name in values) {
      bound[i] = values[parameter.name]
    } else {
      throw new TypeError(`no value for slot ${parameter.name}`)
    }
  }
  return bound
}
