// Bundles end to end on real packs: export → inspect → plan → import, idempotent re-import,
// a conflict and asNew; and the refusals for untrusted input (oversized, wrong digest,
// traversal, symbolic links out of the root) — each refusal writes nothing.
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { digestPayload, MAX_BUNDLE_BYTES, stableStringify } from '../../../plugins/continuity/bundle-format.ts'
import type { TaskBundle } from '../../../plugins/continuity/bundle-format.ts'
import { importBundle } from '../../../plugins/continuity/bundle-import.ts'
import { exportBundle, sanitizeRemote } from '../../../plugins/continuity/bundle-export.ts'
import { inspectBundle, planImport } from '../../../plugins/continuity/bundles.ts'
import { attachEvidence, recordSource } from '../../../plugins/continuity/ledger.ts'
import { startTask, updateVerification } from '../../../plugins/continuity/lifecycle.ts'
import { readCurrentTaskId, readPassport } from '../../../plugins/continuity/passports.ts'
import { git, pack, refusal, repo } from './_pack.ts'

const V = 'ag-mcp-test'

async function origin(t: Test) {
  const root = await repo(t)
  git(root, 'remote', 'add', 'origin', 'https://user:hunter2@example.com/org/demo.git?x=1#frag')
  await startTask(pack(root), {
    title: 'Port the parser',
    writeScope: ['src'],
    nextActions: ['write tests'],
    constraints: [`keep ${root}/src stable`],
  })
  const ev = await attachEvidence(pack(root), {
    kind: 'test',
    content: 'ok 1 - parses\npassword=swordfish99',
    command: 'npm test',
    exitCode: 0,
  })
  await updateVerification(pack(root), { status: 'passed', evidence: [ev.id], summary: 'tests pass' })
  await recordSource(pack(root), { path: 'src/a.ts', summary: 'exports a', snippet: 'export const a' })
  return { root, evidenceId: ev.id }
}

function packFiles(root: string): string[] {
  const out: string[] = []
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      if (e.isDirectory()) walk(p)
      else out.push(`${p.slice(root.length)}:${statSync(p).size}`)
    }
  }
  walk(join(root, '.agentpack'))
  return out.sort()
}

t.test('round trip: export → inspect → plan → import → idempotent → conflict → asNew', async (t) => {
  const { root: from, evidenceId } = await origin(t)
  const exported = await exportBundle(pack(from), {
    outputPath: 'out/task.bundle.json',
    sources: ['src/a.ts'],
    producerVersion: V,
  })
  t.equal(exported.outputPath, 'out/task.bundle.json')
  t.equal(exported.sources, 1)
  t.equal(exported.evidence, 1)
  const file = join(from, 'out', 'task.bundle.json')
  t.equal(statSync(file).mode & 0o777, 0o600, 'the bundle file is private')
  const text = readFileSync(file, 'utf8')
  const bundle = JSON.parse(text) as TaskBundle
  t.equal(text, `${stableStringify(bundle)}\n`, 'canonical JSON')
  t.notMatch(text, from, 'the absolute work tree never leaves')
  t.match(bundle.task.constraints[0], '[REDACTED:WORKTREE]/src')
  t.notMatch(text, 'swordfish99', 'evidence is redacted')
  t.notMatch(text, 'hunter2', 'remote user info is dropped')
  t.equal(bundle.origin.repository, 'https://example.com/org/demo.git')
  t.equal(bundle.producer.name, 'agentpack-cli', 'the producer name Agentpack accepts')
  t.notOk('decisions' in bundle || 'deadEnds' in bundle, 'no decisions or dead ends are exported')

  await t.rejects(
    exportBundle(pack(from), { outputPath: 'out/task.bundle.json', producerVersion: V }),
    { code: 'conflict' },
    'never overwrites',
  )

  const to = await repo(t)
  writeFileSync(join(to, 'src', 'a.ts'), 'export const a = 1\n')
  const copy = join(to, 'incoming.json')
  writeFileSync(copy, text)
  const inspected = await inspectBundle(pack(to), 'incoming.json')
  t.equal(inspected.bundleId, bundle.bundleId)
  t.same(inspected.counts, { sources: 1, evidence: 1 })
  t.equal(inspected.task.verificationStatus, 'passed')

  const before = packFiles(to)
  const plan = await planImport(pack(to), 'incoming.json')
  t.same(plan.action, { outcome: 'create', task: 'create', bundle: 'retain' })
  t.same(plan.writes, [])
  t.same(packFiles(to), before, 'planning writes nothing')

  const imported = await importBundle(pack(to), 'incoming.json')
  t.ok(imported.applied)
  const p = await readPassport(pack(to), bundle.task.id)
  t.equal(p.status, 'parked', 'an import arrives parked')
  t.equal(p.verification.status, 'unknown', 'with local verification unknown')
  t.equal(await readCurrentTaskId(pack(to)), null, 'the current pointer is untouched')
  t.same(
    imported.manifest.sources.map((s) => s.action),
    ['created'],
    'a source whose local hash matches is imported',
  )
  t.same(
    imported.manifest.evidence.map((e) => [e.originId, e.action]),
    [[evidenceId, 'created']],
  )
  t.same(imported.manifest.originVerification.evidence, [evidenceId])
  const sources = JSON.parse(readFileSync(join(to, '.agentpack', 'sources.json'), 'utf8'))
  t.same(
    sources.sources.map((s: { path: string }) => s.path),
    ['src/a.ts'],
  )

  const again = await importBundle(pack(to), 'incoming.json')
  t.ok(again.idempotent, 'a re-import is an idempotent no-op')
  t.notOk(again.applied)
  t.equal(again.manifest.task.action, 'reused')

  // The same task id from a different bundle: a conflict, then asNew.
  await updateVerification(pack(from), { status: 'pending', summary: 'reopened' })
  const second = await exportBundle(pack(from), { outputPath: 'out/second.json', producerVersion: V })
  writeFileSync(join(to, 'second.json'), readFileSync(join(from, 'out', 'second.json')))
  const conflict = await planImport(pack(to), 'second.json')
  t.equal(conflict.action.outcome, 'conflict')
  t.equal(conflict.destination.status, 'task-present')
  const filesBefore = packFiles(to)
  t.match(
    (await refusal(importBundle(pack(to), 'second.json'))).message,
    /^Bundle import conflict: Task task_\S+ already exists without matching imported bundle sha256:/,
  )
  t.same(packFiles(to), filesBefore, 'a conflicting import writes nothing')
  const asNewPlan = await planImport(pack(to), 'second.json', { asNew: true })
  t.equal(asNewPlan.action.outcome, 'create')
  t.equal(
    asNewPlan.destination.taskId,
    `${bundle.task.id}_import_${second.bundleId.slice(7, 19)}`,
    'a deterministic new id',
  )
  const asNew = await importBundle(pack(to), 'second.json', { asNew: true })
  t.equal(asNew.taskId, asNewPlan.destination.taskId)
  t.ok(asNew.manifest.asNew)
  t.equal((await readPassport(pack(to), asNew.taskId)).status, 'parked')
  t.ok(
    (await importBundle(pack(to), 'second.json', { asNew: true })).idempotent,
    'an asNew re-import is idempotent too',
  )
})

async function bundleIn(t: Test): Promise<{ root: string; bundle: TaskBundle }> {
  const { root } = await origin(t)
  await exportBundle(pack(root), { outputPath: 'b.json', producerVersion: V })
  return { root, bundle: JSON.parse(readFileSync(join(root, 'b.json'), 'utf8')) as TaskBundle }
}

function resealed(b: TaskBundle): string {
  const { bundleId: _i, exportedAt: _e, ...payload } = b
  return JSON.stringify({ ...b, bundleId: digestPayload(payload) })
}

t.test('untrusted bundles are refused before anything is written', async (t) => {
  const { root, bundle } = await bundleIn(t)
  const dest = await repo(t)
  const write = (name: string, text: string) => writeFileSync(join(dest, name), text)
  const cases: [string, string, RegExp][] = [
    ['oversized.json', ' '.repeat(MAX_BUNDLE_BYTES + 1), /over the 2097152-byte limit/],
    ['digest.json', JSON.stringify({ ...bundle, task: { ...bundle.task, title: 'tampered' } }), /digest mismatch/],
    [
      'evidence-digest.json',
      resealed({ ...bundle, evidence: bundle.evidence.map((e) => ({ ...e, content: `${e.content}!` })) }),
      /does not match its contentDigest/,
    ],
    [
      'traversal.json',
      resealed({
        ...bundle,
        sources: [
          { path: '../../etc/passwd', hash: 'a'.repeat(64), size: 1, recordedAt: 'x', summary: '', snippet: '' },
        ],
      }),
      /must be a plain relative path/,
    ],
    [
      'abs-scope.json',
      resealed({ ...bundle, task: { ...bundle.task, writeScope: ['/etc'] } }),
      /must be a plain relative path/,
    ],
    ['bad-id.json', resealed({ ...bundle, task: { ...bundle.task, id: '../task_x' } }), /is not a task id/],
    ['kind.json', JSON.stringify({ ...bundle, kind: 'other' }), /kind must be/],
    ['json.json', '{not json', /not valid JSON/],
  ]
  const before = packFiles(dest)
  for (const [name, text, why] of cases) {
    write(name, text)
    for (const run of [
      () => inspectBundle(pack(dest), name),
      () => planImport(pack(dest), name),
      () => importBundle(pack(dest), name),
    ]) {
      const e = await refusal(run())
      t.equal(e.code, 'invalid', `${name}: ${e.message}`)
      t.match(e.message, why)
    }
  }
  t.same(packFiles(dest), before, 'no refusal wrote anything to the pack')
  t.ok(root)
})

t.test('paths are resolved from the pack root and refused outside it, links included', async (t) => {
  const { root } = await bundleIn(t)
  const dest = await repo(t)
  const outside = join(root, 'b.json')
  t.match(
    (await refusal(inspectBundle(pack(dest), outside))).message,
    /outside the project root/,
    'absolute path elsewhere',
  )
  t.match(
    (await refusal(planImport(pack(dest), `../${root.split('/').pop()}/b.json`))).message,
    /outside the project root/,
    'relative climb',
  )
  symlinkSync(outside, join(dest, 'link.json'))
  t.match(
    (await refusal(inspectBundle(pack(dest), 'link.json'))).message,
    /symbolic link/,
    'a link to a bundle outside',
  )
  symlinkSync(root, join(dest, 'elsewhere'))
  t.match((await refusal(importBundle(pack(dest), 'elsewhere/b.json'))).message, /symbolic link/, 'a linked directory')
  // Export refuses the same escapes for the file it writes.
  await startTask(pack(dest), { title: 'x' })
  for (const [out, why] of [
    ['/tmp/x.json', /must be relative/],
    ['../x.json', /outside the project root/],
    ['.agentpack/x.json', /inside \.agentpack/],
    ['.git/x.json', /inside \.git/],
    ['elsewhere/new.json', /symbolic link out of the project root/],
  ] as const) {
    t.match((await refusal(exportBundle(pack(dest), { outputPath: out, producerVersion: V }))).message, why, out)
  }
  t.notOk(readdirSync(root).includes('new.json'), 'nothing written through the link')
})

t.test('a bundle this pack would redact is refused on import', async (t) => {
  const { bundle } = await bundleIn(t)
  const dest = await repo(t)
  writeFileSync(
    join(dest, 'secret.json'),
    resealed({ ...bundle, handoffMarkdown: 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG' }),
  )
  t.ok(await inspectBundle(pack(dest), 'secret.json'), 'inspect shows it')
  t.match((await refusal(importBundle(pack(dest), 'secret.json'))).message, /values this pack would redact/)
})

t.test('remote locators lose credentials, queries and local paths', async (t) => {
  t.equal(sanitizeRemote('git@github.com:org/repo.git'), 'ssh://github.com/org/repo.git')
  t.equal(sanitizeRemote('https://tok@host/x.git?a#b'), 'https://host/x.git')
  t.equal(sanitizeRemote('/srv/git/x'), undefined)
  t.equal(sanitizeRemote('file:///srv/x'), undefined)
})

t.test('the export output directory is created privately inside the root', async (t) => {
  const root = await repo(t)
  mkdirSync(join(root, 'exports-here'))
  await startTask(pack(root), { title: 'x' })
  const r = await exportBundle(pack(root), { outputPath: 'exports-here/deep/one.json', producerVersion: V })
  t.equal(r.outputPath, 'exports-here/deep/one.json')
  t.equal(r.evidence, 0)
})
