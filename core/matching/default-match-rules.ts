/**
 * The default rule set of duplicate matching: the text of `default-match-rules.json`, which the
 * package ships for an operator to copy and change (`serve --match-rules FILE`). A test keeps
 * the two identical. The core reads no files, so the text lives here too.
 */
export const DEFAULT_MATCH_RULES_JSON = `{
  "threshold": 0.6,
  "rules": [
    { "rule": "fiscal_code", "weight": 1 },
    { "rule": "email", "weight": 0.5 },
    { "rule": "phone", "weight": 0.5 },
    { "rule": "name", "weight": 0.35, "min_similarity": 0.8 },
    { "rule": "date_of_birth", "weight": 0.3 },
    { "rule": "date_of_birth_swapped", "weight": 0.2 },
    { "rule": "date_of_birth_differs", "weight": -0.3 }
  ]
}
`
