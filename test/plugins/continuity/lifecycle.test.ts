// Every lifecycle transition of a Task Passport and every refusal, on a real pack in a real
// git repository; each refusal leaves the passport and the pointer exactly as they were.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import t from 'tap'
import {
  abandonTask,
  blockTask,
  closeTask,
  finalizeAdvisories,
  finalizeTask,
  parkTask,
  startTask,
  switchTask,
  updateTask,
  updateVerification,
} from '../../../plugins/continuity/lifecycle.ts'
import { readCurrentTaskId, readPassport } from '../../../plugins/continuity/passports.ts'
import { pack, refusal, repo } from './_pack.ts'

function snapshot(root: string, id: string) {
  return {
    passport: readFileSync(join(root, '.agentpack', 'tasks', id, 'passport.json'), 'utf8'),
    current: readFileSync(join(root, '.agentpack', 'tasks', 'current'), 'utf8'),
  }
}

function taskEvents(root: string, id: string): { type: string; status?: string }[] {
  return readFileSync(join(root, '.agentpack', 'tasks', id, 'events.jsonl'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
}

t.test('start: none → active, recorded with branch, head, worktree and a start event', async (t) => {
  const root = await repo(t)
  const p = await startTask(pack(root), {
    title: 'Fix the parser',
    writeScope: ['src', './src/'],
    nextActions: ['a', 'a'],
  })
  t.equal(p.status, 'active')
  t.match(p.id, /^task_\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f]{6}_fix-the-parser$/)
  t.equal(p.branch, 'main')
  t.match(p.baseHead, /^[0-9a-f]{7,}$/)
  t.equal(p.worktree, root)
  t.same(p.writeScope, ['src'], 'scope normalised and deduplicated')
  t.same(p.nextActions, ['a'])
  t.equal(p.objective, 'Fix the parser', 'objective defaults to the title')
  t.equal(await readCurrentTaskId(pack(root)), p.id)
  t.same(
    taskEvents(root, p.id).map((e) => e.type),
    ['task-start'],
  )
})

t.test('start refusals: empty title, outside scope, current active/blocked/verifying', async (t) => {
  const root = await repo(t)
  t.equal((await refusal(startTask(pack(root), { title: '   ' }))).code, 'invalid')
  t.match(
    (await refusal(startTask(pack(root), { title: 'x', writeScope: ['../elsewhere'] }))).message,
    /^Refusing write scope outside project root: \.\.\/elsewhere$/,
  )
  const first = await startTask(pack(root), { title: 'first' })
  for (const make of [
    async () => undefined,
    () => blockTask(pack(root), 'waiting'),
    () => updateVerification(pack(root), { status: 'passed' }),
  ]) {
    await make()
    const before = snapshot(root, first.id)
    const e = await refusal(startTask(pack(root), { title: 'second' }))
    t.equal(e.code, 'conflict')
    t.match(e.message, /is (active|blocked|verifying); park or close it before starting a new task\.$/)
    t.same(snapshot(root, first.id), before, 'nothing changed')
  }
  await parkTask(pack(root))
  const second = await startTask(pack(root), { title: 'second' })
  t.equal(second.status, 'active', 'a parked current task lets a new one start')
})

t.test('start without a pack: a refusal naming the init command, nothing created', async (t) => {
  const root = await repo(t, { init: false })
  const e = await refusal(startTask(pack(root), { title: 'x' }))
  t.equal(e.code, 'not_initialized')
  t.match(e.message, /ag-mcp continuity init/)
})

t.test('park: active, blocked and verifying → parked; no current task and closed tasks refused', async (t) => {
  const root = await repo(t)
  t.equal((await refusal(parkTask(pack(root)))).code, 'conflict')
  for (const prep of ['active', 'blocked', 'verifying'] as const) {
    await startTask(pack(root), { title: `park from ${prep}` })
    if (prep === 'blocked') await blockTask(pack(root), 'why')
    if (prep === 'verifying') await updateVerification(pack(root), { status: 'failed' })
    const p = await parkTask(pack(root))
    t.equal(p.status, 'parked', `${prep} → parked`)
  }
  const done = await startTask(pack(root), { title: 'done' })
  await finalizeTask(pack(root), { status: 'passed' })
  const before = snapshot(root, done.id)
  t.match((await refusal(parkTask(pack(root)))).message, /^Cannot update closed task task_/)
  t.same(snapshot(root, done.id), before)
})

t.test('switch: parked → active (verdict open) or verifying (verdict final); refusals', async (t) => {
  const root = await repo(t)
  const a = await startTask(pack(root), { title: 'a' })
  await parkTask(pack(root))
  const b = await startTask(pack(root), { title: 'b' })
  await updateVerification(pack(root), { status: 'accepted', summary: 'ok' })
  t.equal((await readPassport(pack(root), b.id)).status, 'verifying')

  const busy = await refusal(switchTask(pack(root), a.id))
  t.equal(busy.code, 'conflict')
  t.match(busy.message, /^Cannot switch tasks while current task task_\S+ is verifying; park or finalize it first\.$/)
  t.equal(await readCurrentTaskId(pack(root)), b.id, 'pointer unchanged')

  const resumed = await switchTask(pack(root), a.id, { parkCurrent: true })
  t.equal(resumed.status, 'active', 'parked with unknown verdict resumes active')
  t.equal((await readPassport(pack(root), b.id)).status, 'parked', 'parkCurrent parked the verifying task')

  await parkTask(pack(root))
  const back = await switchTask(pack(root), b.id)
  t.equal(back.status, 'verifying', 'parked with a final verdict resumes verifying')
  t.same(
    taskEvents(root, b.id).map((e) => e.type),
    ['task-start', 'task-verify', 'task-park', 'task-switch'],
  )

  t.equal((await refusal(switchTask(pack(root), 'task_nope'))).code, 'not_found')
  t.equal((await refusal(switchTask(pack(root), '../etc'))).code, 'invalid')
  await finalizeTask(pack(root), {})
  const closed = await refusal(switchTask(pack(root), b.id))
  t.match(closed.message, /^Cannot switch to closed task task_/)
})

t.test(
  'verification: final → verifying, pending/unknown → active, unblocks, no-op repeats, parked refused',
  async (t) => {
    const root = await repo(t)
    t.equal((await refusal(updateVerification(pack(root), { status: 'passed' }))).code, 'conflict', 'no current task')
    const p = await startTask(pack(root), { title: 'v' })
    let r = await updateVerification(pack(root), { status: 'passed', evidence: ['evt_1'], summary: 'tests green' })
    t.equal(r.passport.status, 'verifying')
    t.ok(r.changed)
    r = await updateVerification(pack(root), { status: 'passed', evidence: ['evt_1'], summary: 'tests green' })
    t.notOk(r.changed, 'identical repeat is a no-op')
    t.equal(taskEvents(root, p.id).filter((e) => e.type === 'task-verify').length, 1, 'and adds no event')
    r = await updateVerification(pack(root), { status: 'pending' })
    t.equal(r.passport.status, 'active', 'pending returns to active')
    t.same(r.passport.verification.evidence, ['evt_1'], 'evidence accumulates')
    await blockTask(pack(root), 'waiting on review')
    t.equal((await readPassport(pack(root), p.id)).blockedReason, 'waiting on review')
    r = await updateVerification(pack(root), { status: 'unknown' })
    t.equal(r.passport.status, 'active', 'blocked → active by a non-final verdict')
    t.notOk('blockedReason' in r.passport, 'the block reason goes with the block')
    await blockTask(pack(root), 'again')
    r = await updateVerification(pack(root), { status: 'failed' })
    t.equal(r.passport.status, 'verifying', 'blocked → verifying by a final verdict')
    await parkTask(pack(root))
    const before = snapshot(root, p.id)
    t.match(
      (await refusal(updateVerification(pack(root), { status: 'pending' }))).message,
      /^Current task is parked; resume it first with `agentpack task switch task_/,
    )
    t.same(snapshot(root, p.id), before)
  },
)

t.test('finalize: needs a final verdict; accepted with next actions needs force; advisories', async (t) => {
  const root = await repo(t)
  const p = await startTask(pack(root), { title: 'f', writeScope: ['src'], nextActions: ['ship it'] })
  const before = snapshot(root, p.id)
  t.match(
    (await refusal(finalizeTask(pack(root), {}))).message,
    /^task finalize requires verification status passed, failed, or accepted/,
  )
  const e = await refusal(finalizeTask(pack(root), { status: 'accepted' }))
  t.equal(e.code, 'conflict')
  t.match(e.message, /refuses to close a task that still has next actions.*--force/)
  t.same(snapshot(root, p.id), before, 'refusals change nothing')
  const { writeFileSync } = await import('node:fs')
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 2\n')
  const done = await finalizeTask(pack(root), {
    status: 'accepted',
    force: true,
    summary: 'as is',
    evidence: ['evt_x'],
  })
  t.equal(done.status, 'completed')
  t.ok(done.closedAt)
  t.same(done.verification, { status: 'accepted', evidence: ['evt_x'], summary: 'as is' })
  const adv = await finalizeAdvisories(pack(root), done)
  t.match(adv.join('\n'), /Uncommitted changes remain inside the task write scope: src\/a\.ts/)
  t.match(adv.join('\n'), /Closed with 1 remaining next action/)
  t.match(adv.join('\n'), /No repo checkpoint since this task started/)
  t.equal((await refusal(finalizeTask(pack(root), { status: 'passed' }))).code, 'conflict', 'closed task refused')

  await startTask(pack(root), { title: 'g' })
  await updateVerification(pack(root), { status: 'passed' })
  t.equal(
    (await finalizeTask(pack(root), {})).verification.status,
    'passed',
    'verifying → completed with the recorded verdict',
  )
})

t.test('update: lists append and dedupe, replace flags, no-op and empty refused, status unchanged', async (t) => {
  const root = await repo(t)
  t.equal((await refusal(updateTask(pack(root), { objective: 'x' }))).code, 'conflict', 'no current task')
  const p = await startTask(pack(root), { title: 'u', constraints: ['c1'], nextActions: ['n1'] })
  let u = await updateTask(pack(root), {
    constraints: ['c2', 'c1'],
    nextActions: ['n2'],
    tags: ['t'],
    risk: 'high',
    writeScope: ['src'],
  })
  t.same(u.constraints, ['c1', 'c2'])
  t.same(u.nextActions, ['n1', 'n2'])
  t.equal(u.risk, 'high')
  t.equal(u.status, 'active')
  u = await updateTask(pack(root), { constraints: ['only'], replaceConstraints: true })
  t.same(u.constraints, ['only'], 'replaceConstraints replaces')
  u = await updateTask(pack(root), { clearNextActions: true })
  t.same(u.nextActions, [], 'clearNextActions without a list clears')
  u = await updateTask(pack(root), { links: { agwpTask: 'T-1', agwpRun: 'run_9' } })
  t.same(u.links, { agwpTask: 'T-1', agwpRun: 'run_9' }, 'a passport can name an AGWP task and run')
  const before = snapshot(root, p.id)
  t.equal((await refusal(updateTask(pack(root), {}))).code, 'invalid', 'empty update refused')
  t.equal((await refusal(updateTask(pack(root), { objective: '  ' }))).code, 'invalid', 'blank objective is empty')
  t.match(
    (await refusal(updateTask(pack(root), { risk: 'high' }))).message,
    /^task update did not change the current task$/,
  )
  t.same(snapshot(root, p.id), before)
})

t.test('CLI-only transitions: block, close, abandon (verifying refused)', async (t) => {
  const root = await repo(t)
  await startTask(pack(root), { title: 'b' })
  t.equal(
    (await blockTask(pack(root), 'needs api_key=abcdef123456')).blockedReason,
    'needs api_key=[REDACTED]',
    'the reason is redacted',
  )
  const closed = await closeTask(pack(root))
  t.equal(closed.status, 'completed')
  t.equal((await refusal(closeTask(pack(root)))).code, 'conflict')
  for (const prep of ['active', 'parked', 'blocked'] as const) {
    const p = await startTask(pack(root), { title: prep })
    if (prep === 'parked') {
      await parkTask(pack(root))
      await switchTask(pack(root), p.id)
      await parkTask(pack(root))
    }
    if (prep === 'blocked') await blockTask(pack(root), 'x')
    const a = await abandonTask(pack(root))
    t.equal(a.status, 'abandoned', `${prep} → abandoned`)
    t.ok(a.closedAt)
  }
  await startTask(pack(root), { title: 'v' })
  await updateVerification(pack(root), { status: 'passed' })
  t.match((await refusal(abandonTask(pack(root)))).message, /is verifying/)
})

t.test('a cancelled call writes nothing', async (t) => {
  const root = await repo(t)
  const ac = new AbortController()
  ac.abort()
  const e = await refusal(startTask(pack(root, ac.signal), { title: 'never' }))
  t.equal(e.code, 'cancelled')
  t.equal(await readCurrentTaskId(pack(root)), null)
})
