import Type from 'typebox'
import { BeneficiaryListItem, UpdateBeneficiaryBody } from '../beneficiary.js'
import { MATCH_RULE_KINDS } from './match-rules.js'

// Schemas of matching's bodies (D38), for the OpenAPI document; the request is validated as an
// update's body is (`parseUpdateInput`), then checked for an identifying field.

/**
 * Body of `POST /beneficiaries/match`: the create body's fields, every one optional; at least a
 * fiscal code, an e-mail address, a phone number, or both names.
 */
export const MatchCandidateBody = Type.Object(UpdateBeneficiaryBody.properties, {
  additionalProperties: false,
  description:
    'A candidate in the create body shape, every field optional. At least one of fiscal_code, email, phone, or both first_name and last_name.',
})

/** A rule that fired, with its weight. */
export const MatchReason = Type.Object({
  rule: Type.Enum(MATCH_RULE_KINDS),
  weight: Type.Number({ minimum: -1, maximum: 1 }),
})

/** One match: the list item shape plus `score` and `reasons`. */
export const BeneficiaryMatch = Type.Object({
  ...BeneficiaryListItem.properties,
  score: Type.Number({
    minimum: 0,
    maximum: 1,
    description: 'Sum of the weights of the rules that fired, within 0–1.',
  }),
  reasons: Type.Array(MatchReason, { description: 'The rules that fired, in the rule set order.' }),
})

/** `POST /beneficiaries/match` and `GET /beneficiaries/{id}/matches`: at most 20, best first. */
export const MatchList = Type.Object({
  data: Type.Array(BeneficiaryMatch, { maxItems: 20 }),
})
