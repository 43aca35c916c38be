/** One sample line of the Prometheus text format. */
export interface Sample {
  /** The sample's name: the family's, or with `_bucket`, `_sum`, `_count` for a histogram. */
  readonly name: string
  readonly labels: Readonly<Record<string, string>>
  readonly value: number
}

/** A metric family: its `# TYPE`, its `# HELP` and its samples. */
export interface Family {
  readonly type: string
  readonly help: string
  readonly samples: Sample[]
}

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped'])
const SUFFIXES: Readonly<Record<string, readonly string[]>> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['_sum', '_count'],
}

/**
 * Parses the Prometheus text exposition format 0.0.4 strictly, by its rules: `# HELP` and
 * `# TYPE` lines (the type before the family's samples, once), sample lines
 * `name{label="value",…} value [timestamp]` with the three escapes of label values (`\\`, `\"`,
 * `\n`), values as Go's ParseFloat reads them (`+Inf`, `-Inf`, `NaN`, in any case), names by the metric and label name
 * grammars, no label twice in a sample, no sample twice, a line feed at the end.
 *
 * @throws Error naming the first line that breaks a rule.
 */
export function parsePrometheusText(text: string): Map<string, Family> {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a line feed')
  const families = new Map<string, Family>()
  const seen = new Set<string>()
  const lines = text.slice(0, -1).split('\n')
  lines.forEach((line, index) => {
    const fail = (why: string): never => {
      throw new Error(`line ${index + 1}: ${why}: ${JSON.stringify(line)}`)
    }
    if (line.trim() === '') return
    if (line.startsWith('#')) {
      const [, keyword, name, ...rest] = line.split(' ')
      if (keyword !== 'HELP' && keyword !== 'TYPE') return
      if (name === undefined || !METRIC_NAME.test(name)) fail('bad metric name')
      const family = familyOf(families, name!)
      if (keyword === 'TYPE') {
        const type = rest.join(' ')
        if (!TYPES.has(type)) fail('unknown type')
        if (family.samples.length > 0 || family.type !== 'untyped') fail('TYPE after samples')
        families.set(name!, { ...family, type })
      } else {
        families.set(name!, { ...family, help: unescapeHelp(rest.join(' ')) })
      }
      return
    }
    const sample = parseSample(line, fail)
    const key = `${sample.name}${JSON.stringify(Object.entries(sample.labels).sort())}`
    if (seen.has(key)) fail('sample repeated')
    seen.add(key)
    familyOf(families, familyName(families, sample.name)).samples.push(sample)
  })
  return families
}

function familyOf(families: Map<string, Family>, name: string): Family {
  let family = families.get(name)
  if (family === undefined) {
    family = { type: 'untyped', help: '', samples: [] }
    families.set(name, family)
  }
  return family
}

/** The family a sample belongs to: its own name, or a histogram's or summary's base name. */
function familyName(families: Map<string, Family>, sample: string): string {
  for (const [name, family] of families) {
    for (const suffix of SUFFIXES[family.type] ?? []) {
      if (sample === name + suffix) return name
    }
  }
  return sample
}

function parseSample(line: string, fail: (why: string) => never): Sample {
  const brace = line.indexOf('{')
  const space = line.indexOf(' ')
  const nameEnd = brace !== -1 && (space === -1 || brace < space) ? brace : space
  if (nameEnd <= 0) fail('no value')
  const name = line.slice(0, nameEnd)
  if (!METRIC_NAME.test(name)) fail('bad metric name')
  const labels: Record<string, string> = {}
  let at = nameEnd
  if (line[at] === '{') {
    at++
    while (line[at] !== '}') {
      const equals = line.indexOf('=', at)
      if (equals === -1) fail('label without a value')
      const label = line.slice(at, equals)
      if (!LABEL_NAME.test(label)) fail(`bad label name ${label}`)
      if (label in labels) fail(`label ${label} twice`)
      if (line[equals + 1] !== '"') fail('label value not quoted')
      let value = ''
      at = equals + 2
      for (;;) {
        const char = line[at]
        if (char === undefined) fail('unterminated label value')
        if (char === '"') break
        if (char === '\\') {
          const next = line[at + 1]
          if (next === 'n') value += '\n'
          else if (next === '\\' || next === '"') value += next
          else fail('bad escape in a label value')
          at += 2
        } else {
          value += char
          at++
        }
      }
      labels[label] = value
      at++
      if (line[at] === ',') at++
      else if (line[at] !== '}') fail('labels not separated by commas')
    }
    at++
  }
  if (line[at] !== ' ') fail('no space before the value')
  const [valueText, timestamp, extra] = line.slice(at + 1).split(' ')
  if (extra !== undefined || (timestamp !== undefined && !/^-?[0-9]+$/.test(timestamp))) {
    fail('bad timestamp')
  }
  return { name, labels, value: parseValue(valueText ?? '', fail) }
}

/** A value as Go's `strconv.ParseFloat` reads it: `NaN` and `Inf` in any case. */
function parseValue(text: string, fail: (why: string) => never): number {
  const special = /^([+-]?)(inf|infinity|nan)$/i.exec(text)
  if (special !== null) {
    if (special[2]!.toLowerCase() === 'nan') return NaN
    return special[1] === '-' ? -Infinity : Infinity
  }
  if (!/^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/.test(text)) fail('bad value')
  return Number(text)
}

function unescapeHelp(text: string): string {
  return text.replace(/\\(n|\\)/g, (_all, char: string) => (char === 'n' ? '\n' : '\\'))
}

/** The value of the sample of `name` whose labels include `labels`; 0 when there is none. */
export function sampleValue(
  families: Map<string, Family>,
  name: string,
  labels: Readonly<Record<string, string>> = {},
): number {
  for (const family of families.values()) {
    for (const sample of family.samples) {
      if (sample.name !== name) continue
      if (Object.entries(labels).every(([key, value]) => sample.labels[key] === value)) {
        return sample.value
      }
    }
  }
  return 0
}

/** Every label value of every sample. */
export function labelValues(families: Map<string, Family>): string[] {
  return [...families.values()].flatMap((family) =>
    family.samples.flatMap((sample) => Object.values(sample.labels)),
  )
}
