// The error catalogs against their uses and their doc: a code nobody raises is dead text in
// docs/errors.md, and a code not in the doc is one a user cannot look up.
import t from 'tap'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { CATALOG } from '../../core/src/errors.ts'
import { renderErrorsDoc } from '../../core/src/errors-doc.ts'
import { FAILURE_CODES } from '../../core/src/plugin-api.ts'

const root = new URL('../../', import.meta.url).pathname

function sources(dir: string): string[] {
  const out: string[] = []
  for (const name of readdirSync(join(root, dir))) {
    const p = join(dir, name)
    if (statSync(join(root, p)).isDirectory()) out.push(...sources(p))
    else if (p.endsWith('.ts')) out.push(readFileSync(join(root, p), 'utf8'))
  }
  return out
}

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

t.test('every plugin failure code is documented and used by a plugin', async (t) => {
  const plugins = sources('plugins').join('\n')
  for (const code of Object.keys(FAILURE_CODES)) {
    t.match(doc, `| \`${code}\` |`, `${code} is in docs/errors.md`)
    t.ok(new RegExp(`['"]${code}['"]`).test(plugins), `${code} is named in plugins/`)
  }
})
