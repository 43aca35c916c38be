/** Milliseconds in a day: dates in filters and counters are whole UTC days. */
export const DAY_MS = 86_400_000

// Character codes of '0', '-', ':', '.', 'T' and 'Z'.
const ZERO = 0x30
const DASH = 0x2d
const COLON = 0x3a
const DOT = 0x2e
const T = 0x54
const Z = 0x5a

/** The character codes of the tens and the units digit of 0–99. */
const TENS = Array.from({ length: 100 }, (_, n) => ZERO + Math.floor(n / 10))
const UNITS = Array.from({ length: 100 }, (_, n) => ZERO + (n % 10))

/**
 * Epoch milliseconds as an ISO 8601 UTC timestamp, exactly as `Date#toISOString` writes it.
 * A page of results formats two per record: this costs a third of building a `Date` each time
 * (civil-from-days arithmetic, after H. Hinnant), and makes one flat string from character
 * codes, where a template of a dozen pieces left a dozen strings for the serialiser to walk and
 * the collector to copy. Years outside 1000–9999 take the slow path.
 */
export function isoTime(ms: number): string {
  const days = Math.floor(ms / DAY_MS)
  let rest = ms - days * DAY_MS
  const z = days + 719_468
  const era = Math.floor(z / 146_097)
  const dayOfEra = z - era * 146_097
  const yearOfEra = Math.floor(
    (dayOfEra -
      Math.floor(dayOfEra / 1460) +
      Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) /
      365,
  )
  const dayOfYear =
    dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100))
  const shiftedMonth = Math.floor((5 * dayOfYear + 2) / 153)
  const day = dayOfYear - Math.floor((153 * shiftedMonth + 2) / 5) + 1
  const month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
  if (!(year >= 1000 && year <= 9999)) return new Date(ms).toISOString()
  const hours = Math.floor(rest / 3_600_000)
  rest -= hours * 3_600_000
  const minutes = Math.floor(rest / 60_000)
  rest -= minutes * 60_000
  const seconds = Math.floor(rest / 1000)
  const millis = rest - seconds * 1000
  const century = Math.floor(year / 100)
  const yy = year - century * 100
  const tenths = Math.floor(millis / 100)
  const hundredths = Math.floor(millis / 10) - tenths * 10
  // prettier-ignore
  return String.fromCharCode(
    TENS[century]!, UNITS[century]!, TENS[yy]!, UNITS[yy]!, DASH, TENS[month]!, UNITS[month]!,
    DASH, TENS[day]!, UNITS[day]!, T, TENS[hours]!, UNITS[hours]!, COLON, TENS[minutes]!,
    UNITS[minutes]!, COLON, TENS[seconds]!, UNITS[seconds]!, DOT, ZERO + tenths,
    ZERO + hundredths, ZERO + (millis % 10), Z,
  )
}
