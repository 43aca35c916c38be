import assert from 'node:assert/strict'
import { readFile } from 'node:fs/promises'
import { describe, it } from 'node:test'
import {
  DEFAULT_MATCH_RULES,
  MatchRulesError,
  parseMatchRules,
} from '../../core/matching/match-rules.js'
import { DEFAULT_MATCH_RULES_JSON } from '../../core/matching/default-match-rules.js'
import { phoneMatchKey, swappedDate } from '../../core/matching/match-keys.js'
import { nameSimilarity, prepareCandidate, scoreMatch } from '../../core/matching/match-score.js'
import type { BeneficiaryRecord } from '../../core/beneficiary.js'

const STORED: BeneficiaryRecord = {
  id: 7,
  first_name: 'Maria',
  last_name: 'Rossi',
  email: 'Maria.Rossi@example.org',
  phone: '+390612345678',
  date_of_birth: '1985-12-10',
  fiscal_code: 'RSSMRA85T50H501Z',
  address: null,
  metadata: {},
  status: 'active',
  created_at: 0,
  updated_at: 0,
  version: 1,
}

function score(candidate: Parameters<typeof prepareCandidate>[0]) {
  return scoreMatch(prepareCandidate(candidate), STORED, DEFAULT_MATCH_RULES)
}

function failure(text: string): MatchRulesError {
  try {
    parseMatchRules(text)
  } catch (error) {
    assert.ok(error instanceof MatchRulesError)
    return error
  }
  assert.fail('the rules were accepted')
}

describe('match rules', () => {
  it('ships the default rules as a JSON file identical to the built-in text', async () => {
    const file = await readFile(
      new URL('../../../core/matching/default-match-rules.json', import.meta.url),
      'utf8',
    )
    assert.equal(file, DEFAULT_MATCH_RULES_JSON)
    assert.equal(DEFAULT_MATCH_RULES.threshold, 0.6)
    assert.deepEqual(
      DEFAULT_MATCH_RULES.rules.map((rule) => rule.rule),
      [
        'fiscal_code',
        'email',
        'phone',
        'name',
        'date_of_birth',
        'date_of_birth_swapped',
        'date_of_birth_differs',
      ],
    )
  })

  it('names the line and field of a mistake', () => {
    const text =
      '{\n  "threshold": 0.6,\n  "rules": [\n    { "rule": "email", "weight": 0.5 },\n    { "rule": "phone", "weight": 3 }\n  ]\n}\n'
    const error = failure(text)
    assert.equal(error.line, 5)
    assert.equal(error.field, 'rules.1.weight')
    assert.match(error.message, /^line 5, rules\.1\.weight: must be a number from -1 to 1/)
  })

  it('names the line of a JSON syntax error, an unknown rule, a repeated one and an unknown field', () => {
    assert.equal(failure('{\n  "threshold": 0.6,\n  "rules": [,]\n}').line, 3)
    const unknown = failure(
      '{"threshold": 0.6,\n"rules": [\n{"rule": "shoe_size", "weight": 0.2}]}',
    )
    assert.deepEqual([unknown.line, unknown.field], [3, 'rules.0.rule'])
    const twice = failure(
      '{"threshold": 0.6, "rules": [{"rule": "email", "weight": 0.2},\n{"rule": "email", "weight": 0.3}]}',
    )
    assert.deepEqual([twice.line, twice.field], [2, 'rules.1.rule'])
    const extra = failure(
      '{"threshold": 0.6,\n "rules": [{"rule": "email", "weight": 0.2}],\n "colour": 1}',
    )
    assert.deepEqual([extra.line, extra.field], [3, 'colour'])
    assert.equal(
      failure('{"threshold": 0, "rules": [{"rule": "email", "weight": 0.2}]}').field,
      'threshold',
    )
    assert.equal(failure('{"threshold": 0.5, "rules": []}').field, 'rules')
    assert.equal(
      failure(
        '{"threshold": 0.5, "rules": [{"rule": "email", "weight": 0.2, "min_similarity": 0.5}]}',
      ).field,
      'rules.0.min_similarity',
    )
    assert.equal(failure('[1]').field, '')
  })
})

describe('match scoring', () => {
  it('fires each rule on its own kind of evidence, with its weight', () => {
    assert.deepEqual(score({ fiscal_code: 'rssmra85t50h501z' }), {
      score: 1,
      reasons: [{ rule: 'fiscal_code', weight: 1 }],
    })
    assert.deepEqual(score({ email: 'MARIA.ROSSI@EXAMPLE.ORG' }).reasons, [
      { rule: 'email', weight: 0.5 },
    ])
    assert.deepEqual(score({ phone: '06 1234 5678' }).reasons, [{ rule: 'phone', weight: 0.5 }])
    assert.deepEqual(
      score({ first_name: 'Rossi', last_name: 'Maria', date_of_birth: '1985-12-10' }),
      {
        score: 0.65,
        reasons: [
          { rule: 'name', weight: 0.35 },
          { rule: 'date_of_birth', weight: 0.3 },
        ],
      },
    )
    assert.deepEqual(
      score({ first_name: 'Mária', last_name: 'Rosi', date_of_birth: '1985-10-12' }).reasons,
      [
        { rule: 'name', weight: 0.35 },
        { rule: 'date_of_birth_swapped', weight: 0.2 },
      ],
    )
    assert.deepEqual(score({ email: 'maria.rossi@example.org', date_of_birth: '1990-01-01' }), {
      score: 0.2,
      reasons: [
        { rule: 'email', weight: 0.5 },
        { rule: 'date_of_birth_differs', weight: -0.3 },
      ],
    })
    assert.deepEqual(
      score({ first_name: 'Anna', last_name: 'Bianchi', date_of_birth: '1950-01-01' }).score,
      0,
    )
  })

  it('measures name similarity with typos, accents and names the other way round', () => {
    assert.equal(nameSimilarity('maria', 'rossi', 'maria', 'rossi'), 1)
    assert.equal(nameSimilarity('rossi', 'maria', 'maria', 'rossi'), 1)
    assert.equal(nameSimilarity('mraia', 'rossi', 'maria', 'rossi'), 0.9)
    assert.ok(nameSimilarity('anna', 'bianchi', 'maria', 'rossi') < 0.5)
  })

  it('reads phones in E.164, a national number as Italian, and swaps day and month', () => {
    assert.equal(phoneMatchKey('3331234567'), '+393331234567')
    assert.equal(phoneMatchKey('+4915123456789'), '+4915123456789')
    assert.equal(phoneMatchKey('12'), undefined)
    assert.equal(swappedDate('1985-03-10'), '1985-10-03')
    assert.equal(swappedDate('1985-03-13'), undefined)
    assert.equal(swappedDate('1985-03-03'), undefined)
  })
})
