// The error catalogs against their uses and their doc: a code nobody raises is dead text in
// docs/errors.md, and a code not in the doc is one a user cannot look up.
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CATALOG } from '../../core/src/errors.ts'
import { renderErrorsDoc } from '../../core/src/errors-doc.ts'
import { FAILURE_CODES, localFailure, relayed } from '../../core/src/plugin-api.ts'
import type { FailureCode, Plugin } from '../../core/src/plugin-api.ts'
import { createTestPipeline } from '../helpers/test-pipeline.ts'

const root = new URL('../../', import.meta.url).pathname

/** The .ts files under `dir`, by path from the repository root. */
function sourceFiles(dir: string): [path: string, text: string][] {
  const out: [string, string][] = []
  for (const name of readdirSync(join(root, dir))) {
    const p = join(dir, name)
    if (statSync(join(root, p)).isDirectory()) out.push(...sourceFiles(p))
    else if (p.endsWith('.ts')) out.push([p, readFileSync(join(root, p), 'utf8')])
  }
  return out
}
const sources = (dir: string): string[] => sourceFiles(dir).map(([, text]) => text)

const doc = readFileSync(join(root, 'docs/errors.md'), 'utf8')

t.test('docs/errors.md is what the build writes from the catalogs', async (t) => {
  t.equal(doc, renderErrorsDoc())
})

t.test('every core code is documented and raised', async (t) => {
  const core = sources('core/src')
    .filter((s) => !s.includes('export const CATALOG'))
    .join('\n')
  for (const code of Object.keys(CATALOG)) {
    t.match(doc, `| \`${code}\` |`, `${code} is in docs/errors.md`)
    t.ok(
      new RegExp(`(refusal|protocolError)\\(\\s*'${code}'`).test(core),
      `${code} is raised with refusal() or protocolError() in core/src`,
    )
  }
})

t.test('docs/errors.md shows no template syntax: a hole reads as its name', async (t) => {
  // Inline code (`{}` for none) is literal; anything else in braces is a hole left raw.
  const prose = doc.replace(/`[^`\n]*`/g, '')
  t.same(prose.match(/\{[A-Za-z_$][\w$]*\}|\$\{|\[object |undefined/g), null, 'no {name}, ${, [object or undefined')
  t.match(doc, '| `plugin_failed` | failed: the *plugin* plugin reported *failure*.', 'holes in italics')
  t.match(doc, '"Its message, quoted:" (for a peer tool: "Its message is above.")', 'both places a message is shown')
})

t.test('every plugin failure code is documented and used by a plugin or the core', async (t) => {
  // The contract's own table (plugin-api.ts) names every code: it does not count as a use.
  const users = [...sourceFiles('plugins'), ...sourceFiles('core/src')]
    .filter(([p]) => p !== 'core/src/plugin-api.ts')
    .map(([, text]) => text)
    .join('\n')
  for (const code of Object.keys(FAILURE_CODES)) {
    t.match(doc, `| \`${code}\` |`, `${code} is in docs/errors.md`)
    t.ok(new RegExp(`['"]${code}['"]`).test(users), `${code} is named in plugins/ or core/src`)
  }
})

t.test('every plugin failure code reaches the model in the summary and structuredContent', async (t) => {
  let thrown: unknown
  const agwp: Plugin = {
    name: 'agwp',
    api: 1,
    handlers: {},
    operation: {
      schema: {},
      run: async () => {
        throw thrown
      },
    },
  }
  const h = createTestPipeline({ plugins: { agwp } })
  for (const code of Object.keys(FAILURE_CODES) as FailureCode[]) {
    thrown = localFailure(code, `the ${code} message`)
    const own = await h.call('log', { repo: 'team/a' })
    t.equal(own.isError, true)
    t.match(own.text, `log: failed: the agwp plugin reported ${code}. `, `${code}: named in the summary`)
    t.same(own.structured, { error: { code: 'plugin_failed', plugin: 'agwp', failure: code, shown: 'quoted' } })
    thrown = relayed(code, `the upstream's ${code}`, { status: 500 })
    const relayedBack = await h.call('log', { repo: 'team/a' })
    t.same(
      relayedBack.structured,
      { error: { code: 'upstream_failed', failure: code, status: 500, shown: 'quoted' } },
      `${code}: relayed as the upstream's`,
    )
  }
})
