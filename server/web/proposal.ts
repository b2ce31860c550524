// One proposal: what it is and who made it, the agent's reasoning and thought log, the commits,
// the diff file by file; beside it the status (mergeability, approvals, blockers, provenance),
// the actions the signed-in person may take, the reviews, the task and run with their notes.
import { get } from './api.ts'
import { type DiffFile, fileSection } from './diff.ts'
import { badge, h, short, when } from './dom.ts'
import { actionsPanel, reviewsPanel, statusPanel, taskPanel } from './panels.ts'
import { splitReasoning } from './reasoning.ts'
import type { ProposalData } from './shapes.ts'

interface DiffData {
  base: string | null
  head: string
  files: DiffFile[]
  truncated: boolean
}

function section(title: string, testid: string, ...body: (Node | string | null)[]): HTMLElement {
  return h('section', { class: 'card', 'data-testid': testid }, h('h2', null, title), ...body)
}

function reasoningSection(p: ProposalData['proposal']): HTMLElement {
  const r = splitReasoning(p.reasoning ?? '')
  if (r.text === '' && r.thoughts.length === 0 && r.handoff === undefined)
    return section('Reasoning', 'reasoning', h('p', { class: 'muted' }, 'The agent gave no reasoning.'))
  const log =
    r.thoughts.length === 0
      ? null
      : h(
          'div',
          { class: 'thoughts', 'data-testid': 'thought-log' },
          h('h3', null, `AGIT thought log (${r.thoughts.length})`),
          h(
            'table',
            { class: 'thought-table' },
            h(
              'tbody',
              null,
              r.thoughts.map((t) =>
                h(
                  'tr',
                  null,
                  h('td', { class: 'mono when' }, t.time),
                  h('td', null, badge(`${t.role}/${t.category}`, t.category)),
                  h('td', { class: 'prose' }, t.content),
                ),
              ),
            ),
          ),
        )
  return section(
    'Reasoning',
    'reasoning',
    r.text === '' ? null : h('div', { class: 'prose', 'data-testid': 'reasoning-text' }, r.text),
    log,
    r.handoff === undefined
      ? null
      : h('div', { class: 'handoff' }, h('h3', null, 'Continuity handoff'), h('div', { class: 'prose' }, r.handoff)),
  )
}

function commitsSection(d: ProposalData): HTMLElement {
  return section(
    d.commits.length === 1 ? 'Commit' : `Commits (${d.commits.length})`,
    'commits',
    h(
      'ul',
      { class: 'commits' },
      d.commits.map((c) =>
        h(
          'li',
          null,
          h(
            'div',
            { class: 'commit-line' },
            h('span', { class: 'mono sha' }, short(c.id)),
            ' ',
            h('strong', null, c.subject),
          ),
          h('div', { class: 'muted' }, `${c.author.name} <${c.author.email}> · ${when(c.author.date)}`),
          h('pre', { class: 'message' }, c.message),
        ),
      ),
    ),
  )
}

function changesSection(diff: DiffData, view: 'unified' | 'split', params: URLSearchParams): HTMLElement {
  const adds = diff.files.reduce((n, f) => n + f.additions, 0)
  const dels = diff.files.reduce((n, f) => n + f.deletions, 0)
  const toggle = (v: 'unified' | 'split', label: string): HTMLElement => {
    const q = new URLSearchParams(params)
    if (v === 'unified') q.delete('view')
    else q.set('view', v)
    const s = q.toString()
    return h('a', { class: v === view ? 'seg on' : 'seg', href: `?${s}`, 'data-testid': `view-${v}` }, label)
  }
  return h(
    'section',
    { class: 'changes', 'data-testid': 'changes' },
    h(
      'div',
      { class: 'changes-head' },
      h('h2', null, 'Changes'),
      h(
        'span',
        { class: 'muted' },
        `${diff.files.length} file${diff.files.length === 1 ? '' : 's'} · `,
        h('span', { class: 'plus' }, `+${adds}`),
        ' ',
        h('span', { class: 'minus' }, `−${dels}`),
        ` · ${short(diff.base)}..${short(diff.head)}`,
      ),
      h('span', { class: 'segs' }, toggle('unified', 'Unified'), toggle('split', 'Side by side')),
    ),
    diff.truncated
      ? h(
          'p',
          { class: 'alert' },
          'The diff was cut by the server’s patch size limit; `ag-mcp proposals diff` shows all of it.',
        )
      : null,
    h(
      'ol',
      { class: 'file-index' },
      diff.files.map((f, i) =>
        h(
          'li',
          null,
          h('a', { href: `#file-${i}` }, f.path),
          ' ',
          h('span', { class: 'plus' }, `+${f.additions}`),
          ' ',
          h('span', { class: 'minus' }, `−${f.deletions}`),
        ),
      ),
    ),
    diff.files.map((f, i) => fileSection(f, i, view)),
  )
}

function headline(p: ProposalData['proposal']): HTMLElement {
  return h(
    'div',
    { class: 'headline' },
    h('nav', { class: 'crumbs' }, h('a', { href: '/ui/' }, 'Proposals'), ' / ', h('span', { class: 'mono' }, p.id)),
    h('h1', { 'data-testid': 'title' }, p.title, ' ', h('span', { class: 'pid' }, p.id)),
    h(
      'p',
      { class: 'byline' },
      badge(p.state, p.state),
      ' ',
      h('span', { class: 'mono' }, p.author),
      ' proposes ',
      h('span', { class: 'mono' }, short(p.head)),
      ' into ',
      h('span', { class: 'mono' }, `${p.repo}:${p.target}`),
      ` · opened ${when(p.created_at)}`,
      p.revisions.length > 1 ? ` · revision ${p.revisions.length}` : '',
    ),
  )
}

export async function proposalPage(main: HTMLElement, id: string, params: URLSearchParams): Promise<void> {
  const view = params.get('view') === 'split' ? 'split' : 'unified'
  const enc = encodeURIComponent(id)
  const [d, diff] = await Promise.all([get<ProposalData>(`/proposals/${enc}`), get<DiffData>(`/proposals/${enc}/diff`)])
  performance.mark('ui:data')
  const message = h('div', { class: 'flash', role: 'status', 'aria-live': 'polite', 'data-testid': 'flash' })
  message.hidden = true
  const reload = async (note: { ok: boolean; text: string }): Promise<void> => {
    await proposalPage(main, id, params)
    const flash = main.querySelector('[data-testid="flash"]') as HTMLElement
    flash.textContent = note.text
    flash.className = note.ok ? 'flash ok' : 'flash refused'
    flash.hidden = false
  }
  const p = d.proposal
  main.replaceChildren(
    headline(p),
    message,
    h(
      'div',
      { class: 'layout' },
      h(
        'div',
        { class: 'main-col' },
        p.description ? section('Description', 'description', h('div', { class: 'prose' }, p.description)) : null,
        reasoningSection(p),
        commitsSection(d),
        changesSection(diff, view, params),
      ),
      h(
        'aside',
        { class: 'side-col' },
        statusPanel(d),
        actionsPanel(d, message, reload),
        reviewsPanel(d),
        taskPanel(d),
      ),
    ),
  )
}
