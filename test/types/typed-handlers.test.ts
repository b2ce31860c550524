// typed-handlers.ts without its @ts-expect-error directives must fail to compile, once per
// directive and on the lines that carried one: each directive hides a real type error (the
// typecheck of the whole tree proves the other half, that each line does fail).
import t from 'tap'
import { spawnSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { REPO_ROOT } from '../helpers/mcp-process.ts'

t.test('every @ts-expect-error in typed-handlers.ts hides a type error', async (t) => {
  const source = readFileSync(join(REPO_ROOT, 'test', 'types', 'typed-handlers.ts'), 'utf8').split('\n')
  const expected: number[] = []
  const stripped = source.map((line, i) => {
    if (!line.trimStart().startsWith('// @ts-expect-error')) return line
    expected.push(i + 2) // 1-based number of the line the directive applied to
    return ''
  })
  t.equal(expected.length, 3)
  const dir = t.testdir({})
  const file = join(dir, 'stripped.ts')
  const abs = (rel: string) => join(REPO_ROOT, rel)
  writeFileSync(
    file,
    stripped
      .join('\n')
      .replace("'../../core/src/plugin-api.ts'", JSON.stringify(abs('core/src/plugin-api.ts')))
      .replace("'../../generated/types/tools.ts'", JSON.stringify(abs('generated/types/tools.ts'))),
  )
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      extends: abs('tsconfig.base.json'),
      compilerOptions: { typeRoots: [abs('node_modules/@types')] },
      files: ['stripped.ts'],
    }),
  )
  const r = spawnSync(process.execPath, [abs('node_modules/typescript/bin/tsc'), '-p', dir], { encoding: 'utf8' })
  t.not(r.status, 0, 'it does not compile')
  const lines = [...r.stdout.matchAll(/stripped\.ts\((\d+),\d+\): error TS\d+/g)].map((m) => Number(m[1]))
  t.same(
    [...new Set(lines)].sort((a, b) => a - b),
    expected,
    r.stdout,
  )
})
