import { checkRepoName } from '../paths.ts'
import { parseLimit } from '../util.ts'
import * as pr from '../proposals.ts'
import * as rv from '../reviews.ts'
import { integrate } from '../integrate.ts'
import type { Router } from '../router.ts'
import { q } from './params.ts'

// Proposals, and the gates on their way to the branch: reviews, provenance, integration.

export function registerProposalRoutes(router: Router): void {
  router.add(
    'POST',
    '/workspaces/:id/proposals',
    async (r) => {
      const p = await pr.createProposal(
        r.ctx,
        r.caller,
        r.params['id'] ?? '',
        r.body as Parameters<typeof pr.createProposal>[3],
      )
      return { status: 201, body: await rv.evaluate(r.ctx, p) }
    },
    'ProposalCreateRequest',
  )
  router.add('GET', '/repos/:repo/proposals', async (r) => {
    checkRepoName(r.params['repo'])
    const limit = parseLimit(q(r, 'limit'), 50, 500)
    const pg = await pr.listProposals(r.ctx, r.caller, r.params['repo'] ?? '', q(r, 'state'), q(r, 'cursor'), limit)
    return { body: { proposals: pg.items.map(pr.summary), ...(pg.next_cursor ? { next_cursor: pg.next_cursor } : {}) } }
  })
  router.add('GET', '/proposals/:id', async (r) => ({
    body: await rv.evaluate(r.ctx, await pr.getProposal(r.ctx, r.caller, r.params['id'] ?? '')),
  }))
  router.add('GET', '/proposals/:id/diff', async (r) => ({
    body: await rv.proposalDiff(r.ctx, r.caller, r.params['id'] ?? ''),
  }))
  router.add(
    'POST',
    '/proposals/:id/revisions',
    async (r) => ({
      body: await rv.evaluate(
        r.ctx,
        await pr.reviseProposal(r.ctx, r.caller, r.params['id'] ?? '', r.body as { workspace: string }),
      ),
    }),
    'ProposalRevisionRequest',
  )
  router.add(
    'POST',
    '/proposals/:id/withdraw',
    async (r) => ({
      body: await rv.evaluate(
        r.ctx,
        await pr.withdrawProposal(r.ctx, r.caller, r.params['id'] ?? '', (r.body as { reason?: string }).reason),
      ),
    }),
    'ProposalWithdrawRequest',
  )
}

export function registerGateRoutes(router: Router): void {
  router.add(
    'POST',
    '/proposals/:id/reviews',
    async (r) => ({
      status: 201,
      body: rv.viewReview(
        await rv.createReview(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof rv.createReview>[3]),
      ),
    }),
    'ReviewCreateRequest',
  )
  router.add(
    'POST',
    '/proposals/:id/provenance',
    async (r) => ({
      body: await rv.evaluate(
        r.ctx,
        await pr.attachProvenance(
          r.ctx,
          r.caller,
          r.params['id'] ?? '',
          r.body as Parameters<typeof pr.attachProvenance>[3],
        ),
      ),
    }),
    'ProvenanceAttachRequest',
  )
  router.add(
    'POST',
    '/proposals/:id/integrate',
    async (r) => ({
      body: await integrate(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof integrate>[3]),
    }),
    'IntegrateRequest',
  )
}
