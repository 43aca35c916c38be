import assert from 'node:assert/strict'
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join, relative } from 'node:path'
import { describe, it } from 'node:test'
import { fileURLToPath } from 'node:url'

// The documents a reader follows from the README: every relative link must reach a file, and
// every #anchor a heading of it. The README stays a front door: short, and without figures of
// its own that nothing checks.

const ROOT = fileURLToPath(new URL('../../../', import.meta.url))

/** README.md, CONTRIBUTING.md, CHANGELOG.md and every page of docs/, relative to the root. */
function documents(): string[] {
  const pages = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`)
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...pages.sort()]
}

/** `text` without fenced code blocks and inline code, where a bracket is not a link. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '')
}

/** The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, '')
    .replaceAll(' ', '-')
}

const anchorCache = new Map<string, Set<string>>()

/** Every anchor of a Markdown file: its headings' slugs (the second of a name gets `-1`). */
function anchorsOf(file: string): Set<string> {
  const known = anchorCache.get(file)
  if (known !== undefined) return known
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  const text = readFileSync(file, 'utf8').replace(/^```[\s\S]*?^```/gm, '')
  for (const match of text.matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const slug = slugOf(match[1]!)
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    anchors.add(count === 0 ? slug : `${slug}-${count}`)
  }
  for (const match of text.matchAll(/<a (?:id|name)="([^"]+)"/g)) anchors.add(match[1]!)
  anchorCache.set(file, anchors)
  return anchors
}

/** The relative links of a document, each with what is wrong with it, if anything. */
function brokenLinks(document: string): string[] {
  const problems: string[] = []
  const source = join(ROOT, document)
  const text = prose(readFileSync(source, 'utf8'))
  for (const match of text.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = match[1]!
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
    const [path = '', anchor] = target.split('#', 2)
    const file = path === '' ? source : join(dirname(source), decodeURI(path))
    const shown = `${document}: ${target}`
    if (!existsSync(file)) {
      problems.push(`${shown}: no such file`)
      continue
    }
    if (anchor === undefined || anchor === '') continue
    if (statSync(file).isDirectory() || !file.endsWith('.md')) {
      problems.push(`${shown}: an anchor into something that is not a Markdown file`)
    } else if (!anchorsOf(file).has(decodeURIComponent(anchor))) {
      problems.push(`${shown}: no heading #${anchor} in ${relative(ROOT, file)}`)
    }
  }
  return problems
}

/** Issue and session numbers of the project: its working history, not the reader's. */
const HISTORY = /(?:issue|session) [0-9]|this[ ]session/gi

/** Every Markdown file of the repository, relative to the root, outside installed and built trees. */
function markdownFiles(folder = ''): string[] {
  const skip = new Set(['node_modules', 'dist', 'coverage', '.git', 'data', '.data'])
  return readdirSync(join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = folder === '' ? entry.name : `${folder}/${entry.name}`
    if (entry.isDirectory()) return skip.has(entry.name) ? [] : markdownFiles(path)
    return entry.name.endsWith('.md') ? [path] : []
  })
}

describe('the documentation', () => {
  it('links only to files that exist, and to headings they have', () => {
    const problems = documents().flatMap(brokenLinks)
    assert.deepEqual(problems, [])
  })

  it('finds headings as GitHub names them', () => {
    assert.equal(slugOf("D21 The client's address"), 'd21-the-clients-address')
    assert.equal(slugOf('When Redis fails (D31)'), 'when-redis-fails-d31')
    assert.equal(slugOf('`serve`'), 'serve')
    assert.equal(slugOf('TLS and reverse proxies'), 'tls-and-reverse-proxies')
  })

  it('names no issue or session of the project, and no README has a dated heading', () => {
    const found: string[] = []
    for (const file of markdownFiles()) {
      const text = readFileSync(join(ROOT, file), 'utf8')
      for (const match of text.matchAll(HISTORY)) {
        found.push(`${file}: "${match[0]}"`)
      }
      if (file === 'README.md' || file.endsWith('/README.md')) {
        for (const match of text.matchAll(/^#+ .*\b20\d\d-\d\d-\d\d.*$/gm)) {
          found.push(`${file}: ${match[0]}`)
        }
      }
    }
    assert.deepEqual(found, [])
  })

  it('has a README of at most 300 lines, with no measured figure or date of a run, and the Node.js package.json asks for', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    assert.ok(readme.split('\n').length <= 300, 'README.md is over 300 lines')
    const text = prose(readme)
    const figures = text.match(
      /\b\d[\d,.]*\s?(?:ms|µs|kB|KB|MB|MiB|KiB|GB|GiB|req\/s|files|%)(?![\w])|\b\d+(?:\.\d+)?x\b|\b20\d\d-\d\d-\d\d\b/g,
    )
    assert.deepEqual(figures, null, 'figures in README.md: measure them in docs/performance.md')
    const { engines } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      engines: { node: string }
    }
    // "^20.19.0 || ^22.12.0 || ^24.0.0": each line, with its minimum where it is not x.0.
    const lines = engines.node.split('||').map((range) => range.trim().replace(/^[\^>=]+/, ''))
    assert.ok(lines.length > 0)
    for (const line of lines) {
      const [major, minor] = line.split('.')
      const named =
        minor === undefined || minor === '0'
          ? new RegExp(`Node\\.js [^\\n]*\\b${major}\\b`).test(readme)
          : readme.includes(`(${major}.${minor} or later)`)
      assert.ok(named, `README.md names Node.js ${line}`)
    }
  })
})
