// The public wire contract: every tool's name, title, input and output schema and annotations,
// snapshotted. A change fails this test until the snapshot is regenerated on purpose
// (`npx tap test/manifest/wire-contract.test.ts --snapshot`) and recorded in CHANGELOG.md;
// renaming or removing a tool, or tightening its input, is a breaking change.
import { readdirSync, readFileSync } from 'node:fs'
import t from 'tap'

const dir = new URL('../../manifests/', import.meta.url)
const manifests = readdirSync(dir)
  .filter((f) => f.endsWith('.json') && f !== 'manifest.schema.json')
  .sort()
  .map(
    (f) =>
      JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as {
        group: string
        access: string
        tools: Record<string, unknown>[]
      },
  )

for (const m of manifests) {
  t.test(`group ${m.group}`, async (t) => {
    t.matchSnapshot(
      {
        access: m.access,
        tools: m.tools.map((x) => ({
          name: x['name'],
          // The name it is exposed under when no enabled group has a tool of that name.
          ...(x['altName'] !== undefined ? { altName: x['altName'] } : {}),
          title: x['title'],
          inputSchema: x['input'],
          outputSchema: x['output'],
          annotations: x['annotations'],
        })),
      },
      `${m.group} wire contract`,
    )
  })
}

t.test('every tool is in exactly one snapshot', async (t) => {
  const names = manifests.flatMap((m) => m.tools.map((x) => String(x['name'])))
  t.equal(new Set(names).size, names.length, 'tool names are unique')
})
