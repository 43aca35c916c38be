// Turns the packed package, unpacked in the current folder with the project's package-lock.json
// beside it, into the container image's application: the package's own dependencies and the
// drivers the image serves with, each pinned to the version package-lock.json holds (the one the
// suite ran with), and nothing for development: no devDependencies, no scripts (`prepare` would
// compile), no peers or overrides of the library's hosts. `npm install --package-lock-only`
// then prunes the lockfile to that tree, for `npm ci --omit=dev`.
//
// Usage: node production-manifest.mjs DRIVER… (in the folder of package.json)
import { readFileSync, writeFileSync } from 'node:fs'

const manifest = JSON.parse(readFileSync('package.json', 'utf8'))
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'))
for (const driver of process.argv.slice(2)) {
  const locked = lock.packages[`node_modules/${driver}`]
  if (locked === undefined) throw new Error(`package-lock.json has no ${driver}`)
  manifest.dependencies[driver] = locked.version
}
for (const key of [
  'devDependencies',
  'scripts',
  'overrides',
  'peerDependencies',
  'peerDependenciesMeta',
]) {
  delete manifest[key]
}
writeFileSync('package.json', `${JSON.stringify(manifest, null, 2)}\n`)
