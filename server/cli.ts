#!/usr/bin/env node
import { runCli } from './cli/run-cli.js'

// The entry point of `beneficiaries` (and `npm start`). The exit is explicit: after a graceful
// stop, idle keep-alive connections of the uWS transport would otherwise hold the process.
const status = await runCli(process.argv.slice(2), {
  env: process.env,
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
  ...(process.stderr.isTTY && {
    terminal: {
      write: (text: string) => void process.stderr.write(text),
      get columns() {
        return process.stderr.columns
      },
    },
  }),
  signals: process,
})
process.exitCode = status
process.stdout.write('', () => process.exit(status))
