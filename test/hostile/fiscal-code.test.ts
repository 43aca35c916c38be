import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import fc from 'fast-check'
import { fiscalCodeBirthDateProblem, isFiscalCode } from '../../core/validation/index.js'
import {
  allowedAt,
  birthDateOf,
  checkCharacter,
  fiscalCode,
  type FiscalPerson,
  isWellFormedCode,
  personArbitrary,
} from './codice-fiscale.js'
import { settings, TODAY } from './hostile-fixtures.js'

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'

describe('codice fiscale: an independent generator against the validator (D8)', () => {
  it('the generator reproduces published codes, so it is a fair referee', () => {
    const rossi = { surname: 'Rossi', name: 'Mario', year: 1985, month: 12, day: 10 }
    const moretti = { surname: 'Moretti', name: 'Matteo', year: 1925, month: 4, day: 9 }
    assert.equal(
      fiscalCode({ ...rossi, female: false, place: 'A562', omocodia: 0 }),
      'RSSMRA85T10A562S',
    )
    assert.equal(
      fiscalCode({ ...moretti, female: false, place: 'F205', omocodia: 0 }),
      'MRTMTT25D09F205Z',
    )
    // The 1st, 3rd and 4th consonant of a name with four or more; X pads a short surname.
    assert.equal(
      fiscalCode({
        surname: 'Fo',
        name: 'Gianfranco',
        year: 1970,
        month: 1,
        day: 1,
        female: true,
        place: 'H501',
        omocodia: 0,
      }).slice(0, 11),
      'FOXGFR70A41',
    )
  })

  it('D8: every generated code is valid, with and without omocodia, men and women', () => {
    fc.assert(
      fc.property(personArbitrary(TODAY), (person) => {
        const code = fiscalCode(person)
        assert.equal(isFiscalCode(code), true, code)
        assert.equal(isWellFormedCode(code), true, code)
        assert.equal(fiscalCodeBirthDateProblem(code, birthDateOf(person)), undefined, code)
      }),
      settings(400),
    )
  })

  it('D8: flipping any one character of a valid code to any other letter or digit is refused', () => {
    fc.assert(
      fc.property(personArbitrary(TODAY), (person) => {
        const code = fiscalCode(person)
        for (let position = 0; position < 16; position++) {
          for (const replacement of ALPHANUMERIC) {
            if (replacement === code.charAt(position)) continue
            const flipped = code.slice(0, position) + replacement + code.slice(position + 1)
            assert.equal(isFiscalCode(flipped), false, `${code} -> ${flipped}`)
            assert.equal(isWellFormedCode(flipped), false, `${code} -> ${flipped} (referee)`)
          }
        }
      }),
      settings(150),
    )
  })

  it('D8: on near-valid strings (any allowed character anywhere) the validator agrees with the referee', () => {
    const nearValid = fc
      .tuple(
        fc.tuple(...Array.from({ length: 15 }, (_, i) => fc.constantFrom(...allowedAt(i)))),
        fc.boolean(),
        fc.constantFrom(...ALPHANUMERIC),
      )
      .map(([chars, correctCheck, check]) => {
        const first15 = chars.join('')
        return first15 + (correctCheck ? checkCharacter(first15) : check)
      })
    let accepted = 0
    fc.assert(
      fc.property(nearValid, (code) => {
        const expected = isWellFormedCode(code)
        assert.equal(isFiscalCode(code), expected, code)
        if (expected) accepted++
      }),
      settings(2_000),
    )
    // Half the strings carry the right check character and most days are real: both answers occur.
    assert.ok(accepted > 0, 'no near-valid string was valid: the property proved nothing')
  })

  it('D8: the code agrees with a date of birth exactly when year, month and day match', () => {
    const anyDate = fc
      .integer({ min: 0, max: Math.floor((Date.parse(TODAY) - Date.UTC(1900, 0, 1)) / 864e5) })
      .map((days) => new Date(Date.UTC(1900, 0, 1) + days * 864e5).toISOString().slice(0, 10))
    // The person's own date, the same day a century away (the code cannot tell), one field off,
    // or any date at all.
    const dateFor = (person: FiscalPerson): fc.Arbitrary<string> =>
      fc.oneof(
        fc.constant(birthDateOf(person)),
        fc.constant(
          birthDateOf({ ...person, year: person.year + (person.year < 2000 ? 100 : -100) }),
        ),
        fc.constant(birthDateOf({ ...person, year: person.year - 1 })),
        fc.constant(birthDateOf({ ...person, month: (person.month % 12) + 1, day: 1 })),
        fc.constant(birthDateOf({ ...person, day: (person.day % 28) + 1 })),
        anyDate,
      )
    const pair = personArbitrary(TODAY).chain((person) =>
      dateFor(person).map((date) => [person, date] as const),
    )
    fc.assert(
      fc.property(pair, ([person, date]) => {
        const code = fiscalCode(person)
        const [year, month, day] = date.split('-').map(Number) as [number, number, number]
        const same =
          year % 100 === person.year % 100 && month === person.month && day === person.day
        const problem = fiscalCodeBirthDateProblem(code, date)
        if (same) assert.equal(problem, undefined, `${code} ${date}`)
        else assert.equal(problem?.field, 'fiscal_code', `${code} ${date}`)
      }),
      settings(500),
    )
  })
})
