// Compatibility both ways with Agentpack's `.agentpack/` layout (1.6/1.7):
//  1. a pack written here in Agentpack's exact shapes (passports in several states, events,
//     sources, evidence, a checkpoint) is read correctly by the plugin;
//  2. what the plugin writes passes the reader below, which applies Agentpack's own checks:
//     field names AND order, id shapes, file and directory modes, the lock directory.
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import type { Test } from 'tap'
import { buildResume } from '../../../plugins/continuity/resume.ts'
import { createCheckpoint, diffCheckpoints } from '../../../plugins/continuity/checkpoints.ts'
import {
  attachEvidence,
  recordDeadEnd,
  recordDecision,
  recordSource,
  replay,
  sourceStatuses,
} from '../../../plugins/continuity/ledger.ts'
import {
  finalizeTask,
  parkTask,
  startTask,
  switchTask,
  updateVerification,
} from '../../../plugins/continuity/lifecycle.ts'
import { withPackLock } from '../../../plugins/continuity/lock.ts'
import { listTasks, taskStatus } from '../../../plugins/continuity/reports.ts'
import { sha256 } from '../../../plugins/continuity/sources.ts'
import { git, pack, repo } from './_pack.ts'

// Agentpack's field order, from its types and writers.
const PASSPORT_KEYS =
  'schemaVersion id title status createdAt updatedAt closedAt objective constraints branch baseHead currentHead worktree writeScope risk verification nextActions tags'.split(
    ' ',
  )
const STATE_KEYS = 'schemaVersion goal currentStatus nextActions currentCheckpoint createdAt updatedAt'.split(' ')
const CONFIG_KEYS = 'schemaVersion projectName redactions defaultBudget includeGitDiff'.split(' ')
const SOURCE_KEYS = 'path hash size mtimeMs recordedAt summary snippet'.split(' ')
const CHECKPOINT_KEYS = 'schemaVersion id createdAt summary status nextActions git'.split(' ')
const ID = (prefix: string) => new RegExp(`^${prefix}_\\d{4}-\\d\\d-\\d\\dT\\d\\d-\\d\\d-\\d\\d-\\d{3}Z_[0-9a-f]{6}`)

/** Agentpack's reader, as a test: throws on anything it would refuse or mis-read. */
function agentpackRead(root: string, t: Test) {
  const ap = join(root, '.agentpack')
  const json = (p: string) => JSON.parse(readFileSync(join(ap, p), 'utf8'))
  t.same(Object.keys(json('config.json')), CONFIG_KEYS, 'config.json keys in order')
  t.same(Object.keys(json('state.json')), STATE_KEYS, 'state.json keys in order')
  const sources = json('sources.json')
  t.same(Object.keys(sources), ['schemaVersion', 'sources'])
  for (const s of sources.sources) t.same(Object.keys(s), SOURCE_KEYS, `source ${s.path} keys in order`)
  for (const line of readFileSync(join(ap, 'events.jsonl'), 'utf8').split('\n').filter(Boolean)) {
    const e = JSON.parse(line)
    t.same(Object.keys(e).slice(0, 3), ['id', 'ts', 'type'], `event ${e.type} starts id, ts, type`)
    t.match(e.id, ID('evt'))
  }
  const current = readFileSync(join(ap, 'tasks', 'current'), 'utf8')
  t.match(current, /^task_[A-Za-z0-9][A-Za-z0-9._-]*\n$/, 'tasks/current is the id and a newline')
  for (const id of readdirSync(join(ap, 'tasks')).filter((n) => n !== 'current')) {
    const p = json(join('tasks', id, 'passport.json'))
    t.same(
      Object.keys(p).filter((k) => k !== 'blockedReason' && k !== 'links'),
      PASSPORT_KEYS,
      `${id}: passport keys in order`,
    )
    t.equal(p.schemaVersion, 1)
    t.equal(p.id, id)
    t.same(Object.keys(p.verification), ['status', 'evidence', 'summary'])
    t.match(id, /^task_\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{6}_[a-z0-9-]+$/)
    for (const d of ['checkpoints', 'evidence', 'exports'])
      t.ok(statSync(join(ap, 'tasks', id, d)).isDirectory(), `${id}/${d}`)
    for (const line of readFileSync(join(ap, 'tasks', id, 'events.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean))
      t.same(Object.keys(JSON.parse(line)).slice(0, 3), ['id', 'ts', 'type'])
  }
  for (const c of readdirSync(join(ap, 'checkpoints'))) {
    t.match(c, /^\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$/, 'checkpoint folder is a stamp')
    t.same(
      Object.keys(json(join('checkpoints', c, 'checkpoint.json'))).filter((k) => k !== 'attachments'),
      CHECKPOINT_KEYS,
    )
    for (const f of ['git-status.txt', 'diff.patch', 'resume.md'])
      t.ok(statSync(join(ap, 'checkpoints', c, f)).isFile())
  }
  // Modes: every file 0600, every directory 0700.
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name)
      t.equal(statSync(p).mode & 0o777, e.isDirectory() ? 0o700 : 0o600, `${p.slice(ap.length)} mode`)
      if (e.isDirectory()) walk(p)
    }
  }
  walk(ap)
}

t.test('a pack written in Agentpack layout is read correctly', async (t) => {
  const root = await repo(t, { init: false })
  const head = git(root, 'rev-parse', '--short', 'HEAD')
  const ap = join(root, '.agentpack')
  for (const d of ['', 'checkpoints', 'evidence', 'tasks', 'checkpoints/2026-05-18T11-00-00-000Z'])
    mkdirSync(join(ap, d), { recursive: true, mode: 0o700 })
  const w = (p: string, v: unknown) =>
    writeFileSync(join(ap, p), typeof v === 'string' ? v : `${JSON.stringify(v, null, 2)}\n`, { mode: 0o600 })
  w('config.json', {
    schemaVersion: 1,
    projectName: 'demo',
    redactions: ['OPENAI_API_KEY'],
    defaultBudget: 4000,
    includeGitDiff: true,
  })
  w('state.json', {
    schemaVersion: 1,
    goal: 'Ship it',
    currentStatus: 'Working.',
    nextActions: ['old'],
    currentCheckpoint: '2026-05-18T11-00-00-000Z',
    createdAt: '2026-05-18T10:00:00.000Z',
    updatedAt: '2026-05-18T11:00:00.000Z',
  })
  const readme = readFileSync(join(root, 'README.md'))
  w('sources.json', {
    schemaVersion: 1,
    sources: [
      {
        path: 'README.md',
        hash: sha256(readme),
        size: readme.length,
        mtimeMs: 1,
        recordedAt: '2026-05-18T10:30:00.000Z',
        summary: 'Project intro; parser notes.',
        snippet: '# demo',
      },
      {
        path: 'src/a.ts',
        hash: 'f'.repeat(64),
        size: 3,
        mtimeMs: 1,
        recordedAt: '2026-05-18T10:31:00.000Z',
        summary: 'Exports a.',
        snippet: '',
      },
      {
        path: 'gone.ts',
        hash: 'e'.repeat(64),
        size: 3,
        mtimeMs: 1,
        recordedAt: '2026-05-18T10:32:00.000Z',
        summary: 'Deleted later.',
        snippet: '',
      },
    ],
  })
  w('evidence/ev_2026-05-18T10-40-00-000Z_abcdef.txt', 'ok 1 - parser handles empty input')
  const events = [
    {
      id: 'evt_2026-05-18T10-35-00-000Z_000001',
      ts: '2026-05-18T10:35:00.000Z',
      type: 'decision',
      text: 'Use a hand-written parser for speed.',
      files: ['src/a.ts'],
      evidence: [],
    },
    {
      id: 'evt_2026-05-18T10-36-00-000Z_000002',
      ts: '2026-05-18T10:36:00.000Z',
      type: 'dead-end',
      text: 'Tried a PEG generator.',
      reason: 'too slow',
      files: [],
    },
    {
      id: 'evt_2026-05-18T10-40-00-000Z_000003',
      ts: '2026-05-18T10:40:00.000Z',
      type: 'evidence',
      kind: 'test',
      path: 'evidence/ev_2026-05-18T10-40-00-000Z_abcdef.txt',
      command: 'npm test',
      exitCode: 0,
    },
    {
      id: 'evt_2026-05-18T11-00-00-000Z_000004',
      ts: '2026-05-18T11:00:00.000Z',
      type: 'checkpoint',
      checkpointId: '2026-05-18T11-00-00-000Z',
      summary: 'Parser half done.',
      status: 'Working.',
    },
  ]
  w('events.jsonl', events.map((e) => JSON.stringify(e)).join('\n') + '\n')
  w('checkpoints/2026-05-18T11-00-00-000Z/checkpoint.json', {
    schemaVersion: 1,
    id: '2026-05-18T11-00-00-000Z',
    createdAt: '2026-05-18T11:00:00.000Z',
    summary: 'Parser half done.',
    status: 'Working.',
    nextActions: ['old'],
    git: { available: true, branch: 'main', head },
  })
  const passport = (id: string, status: string, verification: string, extra: Record<string, unknown> = {}) => ({
    schemaVersion: 1,
    id,
    title: id.split('_').pop(),
    status,
    createdAt: '2026-05-18T10:00:00.000Z',
    updatedAt: `2026-05-18T10:0${status.length}:00.000Z`,
    closedAt: status === 'completed' ? '2026-05-18T11:00:00.000Z' : null,
    objective: 'o',
    constraints: [],
    branch: 'main',
    baseHead: head,
    currentHead: head,
    worktree: root,
    writeScope: ['src'],
    risk: 'low',
    verification: { status: verification, evidence: [], summary: '' },
    nextActions: ['n'],
    tags: [],
    ...extra,
  })
  const ids = {
    active: 'task_2026-05-18T10-00-00-000Z_aaaaaa_parser',
    parked: 'task_2026-05-18T10-00-00-000Z_bbbbbb_docs',
    verifying: 'task_2026-05-18T10-00-00-000Z_cccccc_release',
    done: 'task_2026-05-18T10-00-00-000Z_dddddd_old',
    legacy: 'task_2026-05-18T10-00-00-000Z_eeeeee_roles',
  }
  for (const [id, p] of [
    [ids.active, passport(ids.active, 'active', 'pending')],
    [ids.parked, passport(ids.parked, 'parked', 'passed')],
    [ids.verifying, passport(ids.verifying, 'verifying', 'accepted')],
    [ids.done, passport(ids.done, 'completed', 'passed')],
    [ids.legacy, passport(ids.legacy, 'blocked', 'unknown', { blockedReason: 'waiting', roles: { builder: {} } })],
  ] as const) {
    mkdirSync(join(ap, 'tasks', id), { recursive: true, mode: 0o700 })
    w(`tasks/${id}/passport.json`, p)
    w(`tasks/${id}/events.jsonl`, '')
  }
  w('tasks/current', `${ids.active}\n`)

  const status = await taskStatus(pack(root))
  t.equal(status.passport?.id, ids.active)
  t.match(status.text, 'Drift: none', 'an Agentpack short head is not drift')
  const list = await listTasks(pack(root))
  t.equal(list.tasks.length, 5)
  t.same(list.warnings, [])
  t.equal(list.tasks.find((x) => x.current)?.id, ids.active)
  t.same((await listTasks(pack(root), { open: true })).tasks.map((x) => x.status).sort(), [
    'active',
    'blocked',
    'parked',
    'verifying',
  ])
  t.same(
    (await listTasks(pack(root), { status: ['completed'] })).tasks.map((x) => x.id),
    [ids.done],
  )
  t.equal((await listTasks(pack(root), { limit: 2 })).tasks.length, 2)
  t.same(
    (await sourceStatuses(pack(root))).map((s) => [s.path, s.status]),
    [
      ['README.md', 'unchanged'],
      ['src/a.ts', 'changed'],
      ['gone.ts', 'missing'],
    ],
  )
  const resume = await buildResume(pack(root), { budget: 16000 })
  for (const want of [
    'Use a hand-written parser',
    'Tried a PEG generator. Reason: too slow.',
    'parser handles empty input',
    `- ID: ${ids.active}`,
    'Latest repo checkpoint: 2026-05-18T11-00-00-000Z',
  ])
    t.match(resume.markdown, want)
  t.match((await replay(pack(root), 2)).text, /\[evidence\] test\n.*\[checkpoint\] Parser half done\./)
  t.match(await diffCheckpoints(pack(root)), `main @ ${head}`)
  // Lifecycle on foreign passports: park the active one, resume the parked one with its final verdict.
  await parkTask(pack(root))
  t.equal((await switchTask(pack(root), ids.parked)).status, 'verifying')
  const legacy = JSON.parse(readFileSync(join(ap, 'tasks', ids.legacy, 'passport.json'), 'utf8'))
  t.ok(legacy.roles, 'reading does not rewrite a passport')
  t.equal((await listTasks(pack(root))).tasks.find((x) => x.id === ids.legacy)?.status, 'blocked')
})

t.test('a passport from a newer schema is refused, not half-read', async (t) => {
  const root = await repo(t)
  const id = 'task_2026-05-18T10-00-00-000Z_ffffff_future'
  mkdirSync(join(root, '.agentpack', 'tasks', id), { recursive: true })
  writeFileSync(join(root, '.agentpack', 'tasks', id, 'passport.json'), JSON.stringify({ schemaVersion: 2, id }))
  writeFileSync(join(root, '.agentpack', 'tasks', 'current'), `${id}\n`)
  t.match((await taskStatus(pack(root))).text, /schemaVersion 2/)
  const l = await listTasks(pack(root))
  t.equal(l.tasks.length, 0)
  t.match(l.warnings[0], /Unreadable task passport/)
})

t.test('what the plugin writes passes Agentpack reader rules, order included', async (t) => {
  const root = await repo(t)
  const a = await startTask(pack(root), { title: 'First task', writeScope: ['src'], nextActions: ['one'] })
  await recordDecision(pack(root), { text: 'Keep the API small', files: ['src/a.ts'] })
  await recordDeadEnd(pack(root), { text: 'Tried regex parsing', reason: 'backtracking' })
  const ev = await attachEvidence(pack(root), {
    kind: 'json',
    content: '{"ok":true}',
    command: 'npm test',
    exitCode: 0,
  })
  t.match(ev.id, ID('evt'))
  t.match(String(ev['path']), /^evidence\/ev_\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{6}\.json$/)
  await recordSource(pack(root), { path: 'README.md', summary: 'intro' })
  await updateVerification(pack(root), { status: 'passed', evidence: [ev.id] })
  await createCheckpoint(pack(root), { summary: 'halfway', nextActions: ['two'] })
  await parkTask(pack(root))
  await startTask(pack(root), { title: 'Second' })
  await switchTask(pack(root), a.id, { parkCurrent: true })
  await finalizeTask(pack(root), {})
  agentpackRead(root, t)
})

t.test('the lock directory is the one Agentpack uses, and it is honoured', async (t) => {
  const root = await repo(t)
  mkdirSync(join(root, '.agentpack', '.lock'), { mode: 0o700 })
  const started = recordDecision(pack(root), { text: 'waits for the lock' })
  let done = false
  void started.then(() => (done = true))
  await new Promise((r) => setTimeout(r, 100))
  t.notOk(done, 'a held lock (another process, e.g. Agentpack) holds the write back')
  const { rmSync } = await import('node:fs')
  rmSync(join(root, '.agentpack', '.lock'), { recursive: true })
  await started
  t.ok(done)
  await withPackLock(root, async () =>
    t.ok(statSync(join(root, '.agentpack', '.lock')).isDirectory(), 'held while running'),
  )
  t.throws(() => statSync(join(root, '.agentpack', '.lock')), 'released after')
})
