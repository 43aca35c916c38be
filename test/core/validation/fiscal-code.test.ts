import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { fiscalCodeBirthDateProblem, isFiscalCode } from '../../../core/validation/index.js'
import { withCheckCharacter } from './validation-helpers.js'

// Mario Rossi, born in Rome (H501) on 10 December 1985: the textbook example. The second is the
// example often given for Matteo Moretti, born in Milan on 9 April 1925.
const MARIO_ROSSI = 'RSSMRA85T10A562S'
const MATTEO_MORETTI = 'MRTMTT25D09F205Z'

describe('isFiscalCode (D8)', () => {
  it('accepts well-known published codes', () => {
    assert.equal(isFiscalCode(MARIO_ROSSI), true)
    assert.equal(isFiscalCode(MATTEO_MORETTI), true)
  })

  it('agrees with an independent check-character implementation on the published codes', () => {
    assert.equal(withCheckCharacter(MARIO_ROSSI.slice(0, 15)), MARIO_ROSSI)
    assert.equal(withCheckCharacter(MATTEO_MORETTI.slice(0, 15)), MATTEO_MORETTI)
  })

  it('accepts computed codes for many birth dates, men and women', () => {
    const lastDays = {
      A: 31,
      B: 29,
      C: 31,
      D: 30,
      E: 31,
      H: 30,
      L: 31,
      M: 31,
      P: 30,
      R: 31,
      S: 30,
      T: 31,
    }
    for (const [month, lastDay] of Object.entries(lastDays)) {
      for (const day of [1, 15, lastDay]) {
        for (const offset of [0, 40]) {
          const dd = String(day + offset).padStart(2, '0')
          const code = withCheckCharacter(`BNCGVN70${month}${dd}F205`)
          assert.equal(isFiscalCode(code), true, code)
        }
      }
    }
  })

  it('accepts omocodia letters in every numeric position', () => {
    // L M N P Q R S T U V stand for 0-9; here '8' -> 'U', '5' -> 'R', '1' -> 'M', '0' -> 'L' …
    assert.equal(isFiscalCode(withCheckCharacter('RSSMRA85T10A56N')), true)
    assert.equal(isFiscalCode(withCheckCharacter('RSSMRAURTMLARSN')), true)
  })

  it('refuses a wrong check character', () => {
    assert.equal(isFiscalCode('RSSMRA85T10A562T'), false)
    assert.equal(isFiscalCode(withCheckCharacter('RSSMRA85T10A56N').slice(0, 15) + 'A'), false)
  })

  it('refuses codes of the wrong length or shape, even with a matching check character', () => {
    for (const code of [
      '',
      'RSSMRA85T10A562',
      'RSSMRA85T10A562SX',
      'rssmra85t10a562s', // the caller upper-cases first
      withCheckCharacter('RSSMR185T10A562'), // digit in a letter position
      withCheckCharacter('RSSMRA8AT10A562'), // 'A' is not an omocodia letter
      withCheckCharacter('RSSMRA85T1WA562'), // 'W' is not an omocodia letter
      withCheckCharacter('RSSMRA85T10A5O2'), // 'O' is not an omocodia letter
      withCheckCharacter('RSSMRA85T10256S').slice(0, 16), // digit where the place letter goes
    ]) {
      assert.equal(isFiscalCode(code), false, code)
    }
  })

  it('refuses a month letter outside A B C D E H L M P R S T', () => {
    for (const month of 'FGIJKNOQUVWXYZ') {
      assert.equal(isFiscalCode(withCheckCharacter(`RSSMRA85${month}10A562`)), false, month)
    }
  })

  it('refuses days outside 1-31 and 41-71, and days the month does not have', () => {
    for (const day of ['00', '32', '40', '72', '99']) {
      assert.equal(isFiscalCode(withCheckCharacter(`RSSMRA85T${day}A562`)), false, day)
    }
    assert.equal(isFiscalCode(withCheckCharacter('RSSMRA85D31A562')), false, '31 April')
    assert.equal(isFiscalCode(withCheckCharacter('RSSMRA85B30A562')), false, '30 February')
    assert.equal(isFiscalCode(withCheckCharacter('RSSMRA85B70A562')), false, '30 February, woman')
    assert.equal(isFiscalCode(withCheckCharacter('RSSMRA84B29A562')), true, '29 February')
  })
})

describe('fiscalCodeBirthDateProblem (D8)', () => {
  it('finds no problem when the code encodes the date of birth', () => {
    assert.equal(fiscalCodeBirthDateProblem(MARIO_ROSSI, '1985-12-10'), undefined)
    assert.equal(fiscalCodeBirthDateProblem(MATTEO_MORETTI, '1925-04-09'), undefined)
  })

  it("accepts a woman's code, whose day is the day of birth plus 40", () => {
    const code = withCheckCharacter('RSSMRA85T50A562')
    assert.equal(isFiscalCode(code), true)
    assert.equal(fiscalCodeBirthDateProblem(code, '1985-12-10'), undefined)
  })

  it('decodes omocodia letters before comparing', () => {
    const code = withCheckCharacter('RSSMRAURTMLA562')
    assert.equal(fiscalCodeBirthDateProblem(code, '1985-12-10'), undefined)
  })

  it('compares only the last two digits of the year', () => {
    assert.equal(
      fiscalCodeBirthDateProblem(withCheckCharacter('RSSMRA05A01A562'), '1905-01-01'),
      undefined,
    )
    assert.equal(
      fiscalCodeBirthDateProblem(withCheckCharacter('RSSMRA05A01A562'), '2005-01-01'),
      undefined,
    )
  })

  it('names fiscal_code when the year, month or day disagrees', () => {
    for (const date of ['1986-12-10', '1985-11-10', '1985-12-11', '1985-12-50']) {
      const problem = fiscalCodeBirthDateProblem(MARIO_ROSSI, date)
      assert.equal(problem?.field, 'fiscal_code', date)
    }
  })

  it('leaves malformed values to their own validation', () => {
    assert.equal(fiscalCodeBirthDateProblem('NOT A CODE', '1985-12-10'), undefined)
    assert.equal(fiscalCodeBirthDateProblem(MARIO_ROSSI, '10/12/1985'), undefined)
  })
})
