/** A stand-in body for the writer thread in tests: one that fails as it starts. */
export {}

throw new Error('the writer cannot start')
