import { checkRepoName } from '../paths.ts'
import { page, parseLimit } from '../util.ts'
import * as co from '../coordination.ts'
import type { Router } from '../router.ts'
import type { RunRec } from '../types.ts'
import { q } from './params.ts'

// Coordination: tasks, the runs that claim them, and path leases.

export function registerCoordinationRoutes(router: Router): void {
  router.add('GET', '/repos/:repo/tasks', async (r) => {
    checkRepoName(r.params['repo'])
    const now = await r.ctx.state.now()
    const list = await co.listTasks(r.ctx, r.caller, r.params['repo'] ?? '', q(r, 'state'), now)
    const pg = page(list, q(r, 'cursor'), parseLimit(q(r, 'limit'), 50, 500))
    return {
      body: {
        tasks: await Promise.all(pg.items.map((t) => co.viewTask(r.ctx, t, now))),
        ...(pg.next_cursor ? { next_cursor: pg.next_cursor } : {}),
      },
    }
  })
  router.add('GET', '/tasks/:id', async (r) => ({
    body: await co.viewTask(r.ctx, await co.getTask(r.ctx, r.caller, r.params['id'] ?? ''), await r.ctx.state.now()),
  }))
  const runView = ({ run, now }: { run: RunRec; now: Date }): Record<string, unknown> => co.viewRun(run, now)
  router.add(
    'POST',
    '/tasks/:id/claim',
    async (r) => ({
      status: 201,
      body: runView(await co.claimTask(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { ttl_s?: number }).ttl_s)),
    }),
    'TaskClaimRequest',
  )
  router.add('GET', '/runs/:id', async (r) => ({
    body: co.viewRun(await co.getRun(r.ctx, r.caller, r.params['id'] ?? ''), await r.ctx.state.now()),
  }))
  router.add(
    'POST',
    '/runs/:id/heartbeat',
    async (r) => ({
      body: runView(await co.heartbeat(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { ttl_s?: number }).ttl_s)),
    }),
    'RunHeartbeatRequest',
  )
  router.add(
    'POST',
    '/runs/:id/notes',
    async (r) => ({
      status: 201,
      body: await co.addNote(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { body: string }).body),
    }),
    'RunNoteRequest',
  )
  router.add(
    'POST',
    '/runs/:id/release',
    async (r) => {
      const b = r.body as { outcome: 'done' | 'blocked' | 'abandoned'; note?: string }
      return { body: runView(await co.releaseRun(r.ctx, r.caller, r.params['id'] ?? '', b.outcome, b.note)) }
    },
    'RunReleaseRequest',
  )
  router.add('GET', '/repos/:repo/leases', async (r) => {
    checkRepoName(r.params['repo'])
    const list = await co.listLeases(r.ctx, r.caller, r.params['repo'] ?? '')
    const pg = page(list, q(r, 'cursor'), parseLimit(q(r, 'limit'), 100, 1000))
    return { body: { leases: pg.items.map(co.viewLease), ...(pg.next_cursor ? { next_cursor: pg.next_cursor } : {}) } }
  })
  router.add(
    'POST',
    '/repos/:repo/leases',
    async (r) => {
      checkRepoName(r.params['repo'])
      const b = r.body as { paths: string[]; ttl_s?: number }
      return {
        status: 201,
        body: co.viewLease(await co.acquireLease(r.ctx, r.caller, r.params['repo'] ?? '', b.paths, b.ttl_s)),
      }
    },
    'LeaseCreateRequest',
  )
  router.add('DELETE', '/leases/:id', async (r) => {
    await co.releaseLease(r.ctx, r.caller, r.params['id'] ?? '')
    return { body: { ok: true } }
  })
}
