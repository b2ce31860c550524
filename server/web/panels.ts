// The side of a proposal's page: its status, the actions the signed-in person may take (each
// refused with the server's own reason otherwise), the reviews, and the task and run it came from.
import { ApiError, post } from './api.ts'
import { badge, h, short, when } from './dom.ts'
import type { ProposalData } from './shapes.ts'

type Reload = (note: { ok: boolean; text: string }) => Promise<void>

const MERGE: Record<string, string> = {
  fast_forward: 'fast-forward',
  clean: 'merges cleanly',
  conflicts: 'conflicts',
  up_to_date: 'already in target',
  target_missing: 'target missing',
  not_open: 'not open',
}

const PROVENANCE: Record<string, string> = {
  verified: 'verified',
  stale: 'stale',
  unverified: 'unverified',
  missing: 'missing',
  not_required: 'not required',
}

function card(title: string, testid: string, ...body: (Node | string | null)[]): HTMLElement {
  return h('section', { class: 'card', 'data-testid': testid }, h('h2', null, title), ...body)
}

function row(label: string, ...value: (Node | string | null)[]): HTMLElement {
  return h('div', { class: 'kv' }, h('span', { class: 'k' }, label), h('span', { class: 'v' }, ...value))
}

function provenanceRows(d: ProposalData): HTMLElement[] {
  const pv = d.proposal.provenance
  const status = String(pv['status'] ?? 'missing')
  const kind = status === 'verified' ? 'ok' : status === 'not_required' ? 'muted' : status === 'stale' ? 'warn' : 'bad'
  const rows = [
    row(
      'Provenance',
      h('span', { 'data-testid': 'provenance' }, badge(PROVENANCE[status] ?? status, kind)),
      pv['required'] ? ' (required)' : '',
    ),
  ]
  if (d.signer)
    rows.push(
      row(
        'Signer',
        h('span', { class: 'mono' }, d.signer.principal),
        ` · key ${d.signer.key_id}`,
        d.signer.label ? ` (${d.signer.label})` : '',
        d.signer.revoked_at ? ` · key revoked ${when(d.signer.revoked_at)}` : '',
      ),
    )
  if (typeof pv['attached_by'] === 'string')
    rows.push(row('Attached', `${pv['attached_by']} · ${when(pv['attached_at'])}`))
  if (typeof pv['reason'] === 'string') rows.push(row('Why', String(pv['reason'])))
  return rows
}

export function statusPanel(d: ProposalData): HTMLElement {
  const p = d.proposal
  const approved = p.approvals.length >= p.approvals_required
  const blockers = p.integration_blockers
  return card(
    'Status',
    'status',
    row(
      'Merge',
      h(
        'span',
        { 'data-testid': 'mergeability' },
        badge(MERGE[p.mergeability] ?? p.mergeability, p.mergeable ? 'ok' : 'bad'),
      ),
    ),
    p.conflicts.length ? row('Conflicts', p.conflicts.join(', ')) : null,
    row(
      'Approvals',
      h(
        'span',
        { 'data-testid': 'approvals' },
        badge(`${p.approvals.length} of ${p.approvals_required}`, approved ? 'ok' : 'warn'),
      ),
      p.approvals.length ? ` ${p.approvals.join(', ')}` : '',
    ),
    ...provenanceRows(d),
    p.integrated
      ? row(
          'Integrated',
          `${short(p.integrated.commit)} by ${p.integrated.by} (${p.integrated.strategy}) · ${when(p.integrated.at)}`,
        )
      : null,
    p.withdrawn_reason ? row('Withdrawn', p.withdrawn_reason) : null,
    blockers.length === 0
      ? h('p', { class: 'ok-line', 'data-testid': 'blockers' }, p.state === 'open' ? 'Nothing blocks integration.' : '')
      : h(
          'ul',
          { class: 'blockers', 'data-testid': 'blockers' },
          blockers.map((b) => h('li', null, h('span', { class: 'mono code' }, b.code), ' ', b.message)),
        ),
  )
}

function refusal(e: unknown): string {
  return e instanceof ApiError
    ? `Refused (${e.code}): ${e.message}`
    : `Failed: ${e instanceof Error ? e.message : String(e)}`
}

/** A button that runs one action; a refusal is shown with the server's reason, success reloads. */
function actionButton(
  label: string,
  cls: string,
  allowed: { allowed: boolean; reason?: string },
  message: HTMLElement,
  run: () => Promise<string>,
  reload: Reload,
): HTMLElement {
  const b = h('button', { type: 'button', class: cls, disabled: !allowed.allowed, title: allowed.reason }, label)
  b.addEventListener('click', () => {
    b.disabled = true
    run().then(
      (ok) => reload({ ok: true, text: ok }),
      (e: unknown) => {
        message.textContent = refusal(e)
        message.className = 'flash refused'
        message.hidden = false
        b.disabled = false
      },
    )
  })
  return b
}

const why = (a: { allowed: boolean; reason?: string }): HTMLElement | null =>
  a.allowed ? null : h('p', { class: 'why', 'data-testid': 'not-allowed' }, `Not for you: ${a.reason ?? ''}`)

export function actionsPanel(d: ProposalData, message: HTMLElement, reload: Reload): HTMLElement {
  const p = d.proposal
  const enc = encodeURIComponent(p.id)
  const a = d.actions
  const comment = h('textarea', {
    id: 'review-body',
    rows: '3',
    placeholder: 'A comment (required to request changes)',
  })
  const verdict = (v: string, label: string, cls: string): HTMLElement =>
    actionButton(
      label,
      cls,
      a.review,
      message,
      async () => {
        await post(`/proposals/${enc}/review`, { verdict: v, body: comment.value })
        return `${label}: recorded on ${short(p.head)}.`
      },
      reload,
    )
  const strategy = h(
    'select',
    { id: 'strategy', name: 'strategy', disabled: !a.integrate.allowed },
    ['merge', 'fast_forward', 'squash'].map((s) => h('option', { value: s }, s.replace('_', '-'))),
  )
  const reason = h('input', { id: 'reject-reason', type: 'text', placeholder: 'Why (shown to the agent)' })
  return card(
    'Actions',
    'actions',
    h(
      'div',
      { class: 'action', 'data-testid': 'review-action' },
      h('h3', null, 'Review'),
      comment,
      h(
        'div',
        { class: 'buttons' },
        verdict('approve', 'Approve', 'primary'),
        verdict('request_changes', 'Request changes', 'danger'),
        verdict('comment', 'Comment', 'secondary'),
      ),
      why(a.review),
    ),
    h(
      'div',
      { class: 'action', 'data-testid': 'integrate-action' },
      h('h3', null, 'Integrate'),
      h(
        'div',
        { class: 'buttons' },
        h('label', { for: 'strategy', class: 'inline' }, 'Strategy'),
        strategy,
        actionButton(
          'Integrate',
          'primary',
          a.integrate,
          message,
          async () => {
            const r = await post<{ target: string; commit: string; strategy: string }>(`/proposals/${enc}/integrate`, {
              strategy: strategy.value,
              ...(p.target_head ? { expected_target_head: p.target_head } : {}),
            })
            return `Integrated into ${r.target} (${r.strategy}): ${short(r.commit)}.`
          },
          reload,
        ),
      ),
      why(a.integrate),
    ),
    h(
      'div',
      { class: 'action', 'data-testid': 'reject-action' },
      h('h3', null, 'Reject'),
      reason,
      h(
        'div',
        { class: 'buttons' },
        actionButton(
          'Reject',
          'danger',
          a.reject,
          message,
          async () => {
            await post(`/proposals/${enc}/reject`, { reason: reason.value })
            return 'Rejected: the proposal is withdrawn.'
          },
          reload,
        ),
      ),
      why(a.reject),
    ),
  )
}

const VERDICT: Record<string, [string, string]> = {
  approve: ['approved', 'ok'],
  request_changes: ['changes requested', 'bad'],
  comment: ['commented', 'muted'],
}

export function reviewsPanel(d: ProposalData): HTMLElement {
  const p = d.proposal
  if (p.reviews.length === 0) return card('Reviews', 'reviews', h('p', { class: 'muted' }, 'No reviews yet.'))
  return card(
    'Reviews',
    'reviews',
    h(
      'ul',
      { class: 'reviews' },
      p.reviews.map((r) => {
        const [label, kind] = VERDICT[r.verdict] ?? [r.verdict, 'muted']
        return h(
          'li',
          null,
          h('div', null, badge(label, kind), ' ', h('span', { class: 'mono' }, r.reviewer)),
          h(
            'div',
            { class: 'muted' },
            when(r.created_at),
            r.head !== p.head ? ` · on an older revision (${short(r.head)})` : '',
          ),
          r.body ? h('div', { class: 'prose' }, r.body) : null,
        )
      }),
    ),
  )
}

export function taskPanel(d: ProposalData): HTMLElement {
  const t = d.task
  const r = d.run
  const notes = r?.notes ?? []
  const handoff = notes.filter((n) => n.body.startsWith('Task handoff'))
  const plain = notes.filter((n) => !n.body.startsWith('Task handoff'))
  const noteList = (list: typeof notes): HTMLElement =>
    h(
      'ul',
      { class: 'notes' },
      list.map((n) =>
        h(
          'li',
          null,
          h('div', { class: 'muted' }, `${n.author} · ${when(n.created_at)}`),
          h('div', { class: 'prose' }, n.body),
        ),
      ),
    )
  return card(
    'Task and run',
    'task',
    t
      ? h(
          'div',
          null,
          row('Task', h('span', { class: 'mono' }, t.id), ' ', badge(t.state, t.state)),
          h('p', null, h('strong', null, t.title)),
          t.body ? h('div', { class: 'prose' }, t.body) : null,
        )
      : h('p', { class: 'muted' }, d.proposal.task ? `Task ${d.proposal.task} (not readable)` : 'No task named.'),
    r
      ? row(
          'Run',
          h('span', { class: 'mono' }, r.run_id),
          ' ',
          badge(r.state, r.state),
          r.outcome ? ` · ${r.outcome}` : '',
        )
      : h('p', { class: 'muted' }, 'Not made within a run.'),
    plain.length
      ? h('div', { 'data-testid': 'notes' }, h('h3', null, `Notes (${plain.length})`), noteList(plain))
      : null,
    handoff.length ? h('div', { class: 'handoff' }, h('h3', null, 'Continuity handoff'), noteList(handoff)) : null,
  )
}
