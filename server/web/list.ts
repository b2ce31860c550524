// The list of proposals: filters (state, repository, author, task) in the address, pages of 50,
// newest first.
import { get } from './api.ts'
import type { SessionInfo } from './shapes.ts'
import { badge, h, when } from './dom.ts'

interface Summary {
  id: string
  repo: string
  title: string
  state: string
  author: string
  author_principal: string
  target: string
  task?: string
  created_at: string
  updated_at: string
}
interface Facet {
  value: string
  count: number
}
interface ListAnswer {
  proposals: Summary[]
  total: number
  offset: number
  limit: number
  facets: { repos: Facet[]; authors: Facet[]; tasks: Facet[] }
}

const FILTERS = ['state', 'repo', 'author', 'task'] as const

function go(params: URLSearchParams, changes: Record<string, string | undefined>): void {
  const next = new URLSearchParams(params)
  for (const [k, v] of Object.entries(changes)) {
    if (v === undefined || v === '') next.delete(k)
    else next.set(k, v)
  }
  const q = next.toString()
  location.assign(`/ui/${q ? `?${q}` : ''}`)
}

function select(
  label: string,
  name: (typeof FILTERS)[number],
  current: string,
  options: { value: string; label: string }[],
  params: URLSearchParams,
): HTMLElement {
  const sel = h(
    'select',
    { id: `filter-${name}`, name },
    options.map((o) => h('option', { value: o.value, selected: o.value === current }, o.label)),
  )
  sel.addEventListener('change', () => go(params, { [name]: sel.value, offset: undefined }))
  return h('label', { class: 'filter' }, h('span', null, label), sel)
}

const plural = (n: number, one: string): string => `${n.toLocaleString()} ${one}${n === 1 ? '' : 's'}`

export async function listPage(main: HTMLElement, s: SessionInfo, params: URLSearchParams): Promise<void> {
  const q = new URLSearchParams()
  for (const k of [...FILTERS, 'offset'] as const) {
    const v = params.get(k)
    if (v) q.set(k, v)
  }
  const r = await get<ListAnswer>(`/proposals?${q}`)
  performance.mark('ui:data')
  const state = params.get('state') ?? 'open'
  const all = (f: Facet[], what: string) => [
    { value: '', label: `all ${what}` },
    ...f.map((x) => ({ value: x.value, label: `${x.value} (${x.count})` })),
  ]
  const filters = h(
    'div',
    { class: 'filters' },
    select(
      'State',
      'state',
      state,
      ['open', 'integrated', 'withdrawn', 'all'].map((v) => ({ value: v, label: v })),
      params,
    ),
    select('Repository', 'repo', params.get('repo') ?? '', all(r.facets.repos, 'repositories'), params),
    select('Author', 'author', params.get('author') ?? '', all(r.facets.authors, 'authors'), params),
    select('Task', 'task', params.get('task') ?? '', all(r.facets.tasks, 'tasks'), params),
  )
  const first = r.total === 0 ? 0 : r.offset + 1
  const last = Math.min(r.offset + r.proposals.length, r.total)
  const rows = r.proposals.map((p) =>
    h(
      'tr',
      { 'data-testid': 'proposal-row' },
      h(
        'td',
        { class: 'title-cell' },
        h('a', { href: `/ui/p/${encodeURIComponent(p.id)}` }, h('span', { class: 'pid' }, p.id), ' ', p.title),
      ),
      h('td', null, p.repo),
      h('td', { class: 'mono' }, p.author),
      h('td', { class: 'mono' }, p.task ?? '—'),
      h('td', null, badge(p.state, p.state)),
      h('td', { class: 'mono' }, p.target),
      h('td', { class: 'when' }, when(p.updated_at)),
    ),
  )
  const pager = h('nav', { class: 'pager', 'aria-label': 'pages' })
  const page = (label: string, offset: number | undefined, testid: string): HTMLElement => {
    const b = h(
      'button',
      { type: 'button', class: 'secondary', disabled: offset === undefined, 'data-testid': testid },
      label,
    )
    if (offset !== undefined) b.addEventListener('click', () => go(params, { offset: String(offset) }))
    return b
  }
  pager.append(
    page('← Newer', r.offset > 0 ? Math.max(0, r.offset - r.limit) : undefined, 'newer'),
    h('span', { 'data-testid': 'range' }, r.total === 0 ? 'none' : `${first}–${last} of ${r.total.toLocaleString()}`),
    page('Older →', last < r.total ? r.offset + r.limit : undefined, 'older'),
  )
  main.replaceChildren(
    h(
      'div',
      { class: 'list-head' },
      h('h1', null, 'Proposals'),
      h('p', { class: 'muted' }, `${plural(r.total, 'proposal')} · signed in as ${s.principal}`),
    ),
    filters,
    r.proposals.length === 0
      ? h('p', { class: 'empty' }, 'No proposals match these filters.')
      : h(
          'table',
          { class: 'list' },
          h(
            'thead',
            null,
            h(
              'tr',
              null,
              ['Proposal', 'Repository', 'Author', 'Task', 'State', 'Target', 'Updated'].map((c) => h('th', null, c)),
            ),
          ),
          h('tbody', null, rows),
        ),
    pager,
  )
}
