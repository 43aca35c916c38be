/**
 * Loaded with `node --import` into a process the bulk benchmark times: on exit, writes the
 * process's peak resident set (KiB, every thread's) to the file named by `PEAK_RSS_FILE`.
 */
import { writeFileSync } from 'node:fs'

const file = process.env['PEAK_RSS_FILE']
if (file !== undefined) {
  process.on('exit', () => writeFileSync(file, String(process.resourceUsage().maxRSS)))
}
