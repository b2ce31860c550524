// The diff, file by file: a git patch parsed into rows, shown unified or side by side with syntax
// highlighting; binary files are named, large files are collapsed until asked for.
import { badge, h, text } from './dom.ts'
import { languageOf, START, type State, tokenize } from './highlight.ts'
import { parsePatch, type Row, type RowKind } from './patch.ts'

export interface DiffFile {
  path: string
  old_path?: string
  status: string
  binary: boolean
  additions: number
  deletions: number
  patch: string
}

/** Files whose patch is longer than this many lines are collapsed until opened. */
export const COLLAPSE_LINES = 1000

/** A line of code: its tokens as spans (plain runs as text), hidden characters marked. */
function code(line: string, lang: string | undefined, state: State): { node: Node; state: State } {
  const cell = document.createDocumentFragment()
  const t = tokenize(line, lang, state)
  for (const [cls, s] of t.tokens) {
    if (cls === '') cell.appendChild(text(s))
    else {
      const span = document.createElement('span')
      span.className = `tok-${cls}`
      span.appendChild(text(s))
      cell.appendChild(span)
    }
  }
  return { node: cell, state: t.state }
}

const num = (v: number | undefined): HTMLElement => {
  const td = document.createElement('td')
  td.className = 'ln'
  if (v !== undefined) td.textContent = String(v)
  return td
}

function codeCell(kind: RowKind, node: Node | null): HTMLElement {
  const td = document.createElement('td')
  td.className = `code ${kind}`
  if (node) td.appendChild(node)
  return td
}

/**
 * Highlighting follows each side on its own: context and deleted lines are the old file,
 * context and added lines the new one; each hunk starts afresh (its first line may be inside a
 * comment the patch does not show).
 */
class Sides {
  old: State = START
  neu: State = START
  constructor(private readonly lang: string | undefined) {}
  reset(): void {
    this.old = START
    this.neu = START
  }
  line(r: Row): Node {
    const side = r.kind === 'del' ? this.old : this.neu
    const out = code(r.text, this.lang, side)
    if (r.kind === 'del') this.old = out.state
    else if (r.kind === 'add') this.neu = out.state
    else {
      this.neu = out.state
      this.old = out.state
    }
    return out.node
  }
}

const SIGN: Record<RowKind, string> = { add: '+', del: '-', ctx: ' ', hunk: '', note: '' }

function unified(rows: Row[], lang: string | undefined): HTMLElement {
  const table = h(
    'table',
    { class: 'diff unified' },
    h(
      'colgroup',
      null,
      h('col', { class: 'ln' }),
      h('col', { class: 'ln' }),
      h('col', { class: 'sign' }),
      h('col', null),
    ),
  )
  const body = document.createElement('tbody')
  const sides = new Sides(lang)
  for (const r of rows) {
    const tr = document.createElement('tr')
    if (r.kind === 'hunk' || r.kind === 'note') {
      if (r.kind === 'hunk') sides.reset()
      tr.className = r.kind
      const td = h('td', { colspan: '4', class: r.kind }, r.text)
      tr.appendChild(td)
    } else {
      tr.className = r.kind
      const sign = document.createElement('td')
      sign.className = `sign ${r.kind}`
      sign.textContent = SIGN[r.kind]
      tr.append(num(r.old), num(r.new), sign, codeCell(r.kind, sides.line(r)))
    }
    body.appendChild(tr)
  }
  table.appendChild(body)
  return table
}

function split(rows: Row[], lang: string | undefined): HTMLElement {
  const table = h(
    'table',
    { class: 'diff split' },
    h('colgroup', null, h('col', { class: 'ln' }), h('col', null), h('col', { class: 'ln' }), h('col', null)),
  )
  const body = document.createElement('tbody')
  const sides = new Sides(lang)
  const empty = 'empty' as RowKind
  const pair = (l: Row | undefined, r: Row | undefined): void => {
    const left = l ? sides.line(l) : null
    // A context line is the same on both sides: highlighted once.
    const right = r === l ? (left?.cloneNode(true) ?? null) : r ? sides.line(r) : null
    const tr = document.createElement('tr')
    tr.append(num(l?.old), codeCell(l?.kind ?? empty, left), num(r?.new), codeCell(r?.kind ?? empty, right))
    body.appendChild(tr)
  }
  let i = 0
  while (i < rows.length) {
    const r = rows[i] as Row
    if (r.kind === 'hunk' || r.kind === 'note') {
      if (r.kind === 'hunk') sides.reset()
      const tr = h('tr', { class: r.kind }, h('td', { colspan: '4', class: r.kind }, r.text))
      body.appendChild(tr)
      i++
    } else if (r.kind === 'ctx') {
      pair(r, r)
      i++
    } else {
      // A change block: its deletions beside its additions, line for line.
      const dels: Row[] = []
      const adds: Row[] = []
      while (i < rows.length && (rows[i] as Row).kind === 'del') dels.push(rows[i++] as Row)
      while (i < rows.length && (rows[i] as Row).kind === 'add') adds.push(rows[i++] as Row)
      for (let k = 0; k < Math.max(dels.length, adds.length); k++) pair(dels[k], adds[k])
    }
  }
  table.appendChild(body)
  return table
}

const STATUS: Record<string, string> = {
  added: 'added',
  modified: 'modified',
  deleted: 'deleted',
  renamed: 'renamed',
  copied: 'copied',
  type_changed: 'type changed',
}

/** One file's section; its rows are built only when it is shown. */
export function fileSection(f: DiffFile, index: number, view: 'unified' | 'split'): HTMLElement {
  const name = h(
    'span',
    { class: 'path' },
    f.old_path !== undefined && f.old_path !== f.path ? [f.old_path, ' → ', f.path] : f.path,
  )
  const counts = h(
    'span',
    { class: 'counts' },
    h('span', { class: 'plus' }, `+${f.additions}`),
    ' ',
    h('span', { class: 'minus' }, `−${f.deletions}`),
  )
  const head = h('div', { class: 'file-head' }, badge(STATUS[f.status] ?? f.status, f.status), name, counts)
  const section = h('section', { class: 'file', id: `file-${index}`, 'data-testid': 'diff-file' }, head)
  if (f.binary) {
    section.appendChild(h('p', { class: 'file-note' }, 'Binary file: not shown.'))
    return section
  }
  if (f.patch === '') {
    section.appendChild(
      h(
        'p',
        { class: 'file-note' },
        'No patch: it was cut by the server’s patch size limit (see “diff truncated” above).',
      ),
    )
    return section
  }
  const rows = parsePatch(f.patch)
  const render = (): HTMLElement =>
    h('div', { class: 'file-body' }, (view === 'split' ? split : unified)(rows, languageOf(f.path)))
  if (rows.length <= COLLAPSE_LINES) {
    section.appendChild(render())
    return section
  }
  const changed = f.additions + f.deletions
  const open = h('button', { type: 'button', class: 'secondary' }, 'Show the diff')
  const note = h('p', { class: 'file-note collapsed' }, `Large diff (${changed} changed lines), collapsed. `, open)
  open.addEventListener('click', () => note.replaceWith(render()))
  section.appendChild(note)
  return section
}
