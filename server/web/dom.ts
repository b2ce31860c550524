// Building the page from data without ever parsing data as markup: elements come from
// createElement, text from text nodes, and every string a repository or an agent wrote goes
// through `text`, which names invisible and control characters instead of letting them act
// (a right-to-left override would otherwise reorder what a line seems to say).
import { visibleParts } from '../../lib/visible.ts'

export type Child = Node | string | number | null | undefined | false | readonly Child[]

/** Attributes the page sets; values come from the page's code or pass through `text` rules. */
export interface Props {
  class?: string | undefined
  id?: string | undefined
  title?: string | undefined
  href?: string | undefined
  type?: string | undefined
  name?: string | undefined
  value?: string | undefined
  placeholder?: string | undefined
  for?: string | undefined
  rows?: string | undefined
  autocomplete?: string | undefined
  role?: string | undefined
  disabled?: boolean | undefined
  selected?: boolean | undefined
  checked?: boolean | undefined
  hidden?: boolean | undefined
  colspan?: string | undefined
  'aria-live'?: string | undefined
  'aria-label'?: string | undefined
  'data-testid'?: string | undefined
  'data-state'?: string | undefined
  spellcheck?: string | undefined
}

/** Links stay inside the review page: a repository cannot make one point elsewhere. */
function safeHref(href: string): string {
  if (href.startsWith('/ui/') || href.startsWith('#') || href.startsWith('?')) return href
  throw new Error(`refusing a link outside the review page: ${href.slice(0, 80)}`)
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  props: Props | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag)
  if (props)
    for (const [k, v] of Object.entries(props) as [string, string | boolean | undefined][]) {
      if (v === undefined || v === false) continue
      if (v === true) el.setAttribute(k, '')
      else el.setAttribute(k, k === 'href' ? safeHref(v) : v)
    }
  append(el, children)
  return el
}

export function append(el: Node, children: readonly Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue
    if (typeof c === 'string') el.appendChild(text(c))
    else if (typeof c === 'number') el.appendChild(document.createTextNode(String(c)))
    else if (Array.isArray(c)) append(el, c as readonly Child[])
    else el.appendChild(c as Node)
  }
}

/** Text as the reader must see it: each hidden character as a marked `\u{…}`. */
export function text(s: string): Node {
  const parts = visibleParts(s)
  if (parts.length === 1 && typeof parts[0] === 'string') return document.createTextNode(parts[0])
  const f = document.createDocumentFragment()
  for (const p of parts) {
    if (typeof p === 'string') f.appendChild(document.createTextNode(p))
    else {
      const mark = document.createElement('span')
      mark.className = p.bidi ? 'hidden-char bidi' : 'hidden-char'
      mark.title = `${p.title}: a hidden character, shown here as its code`
      mark.textContent = p.shown
      f.appendChild(mark)
    }
  }
  return f
}

export function clear(el: Element): void {
  el.replaceChildren()
}

/** Dates as a person reads them, in their time zone. */
export function when(iso: unknown): string {
  if (typeof iso !== 'string') return ''
  const d = new Date(iso)
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' })
}

export const short = (oid: unknown): string => (typeof oid === 'string' ? oid.slice(0, 10) : '—')

export function badge(label: string, kind: string): HTMLElement {
  return h('span', { class: `badge badge-${kind.replace(/[^a-z_]/g, '')}` }, label)
}
