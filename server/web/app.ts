// The review page: sign-in, the list of proposals, one proposal. Every page is built with DOM
// calls from JSON the server scrubbed; nothing is ever parsed as HTML (the server's
// Content-Security-Policy enforces Trusted Types, so an innerHTML would throw).
import { ApiError, get, post, setCsrf } from './api.ts'
import { h } from './dom.ts'
import { listPage } from './list.ts'
import { proposalPage } from './proposal.ts'
import type { SessionInfo } from './shapes.ts'

function signInPage(root: HTMLElement, problem: string | undefined): void {
  const input = h('input', {
    id: 'token',
    name: 'token',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: 'agwp_…',
  })
  const alert = h('p', { class: 'alert', role: 'alert', 'data-testid': 'sign-in-error' }, problem ?? '')
  alert.hidden = problem === undefined
  const form = h(
    'form',
    { class: 'sign-in' },
    h('h1', null, 'Sign in to review'),
    h(
      'p',
      null,
      'Paste an AGWP token of yours (a human principal). It is sent once and exchanged for a session cookie that only this page can use; the page never keeps the token. Agents’ tokens cannot sign in.',
    ),
    h('label', { for: 'token' }, 'AGWP token'),
    input,
    h('button', { type: 'submit' }, 'Sign in'),
    alert,
  )
  form.addEventListener('submit', (ev) => {
    ev.preventDefault()
    const token = input.value
    input.value = ''
    post('/sign-in', { token }).then(
      () => location.reload(),
      (e: unknown) => {
        alert.textContent = e instanceof ApiError ? e.message : 'the server could not be reached'
        alert.hidden = false
      },
    )
  })
  root.replaceChildren(h('header', { class: 'bar' }, h('span', { class: 'brand' }, 'ag-server review')), form)
  input.focus()
}

function shell(root: HTMLElement, s: SessionInfo): HTMLElement {
  const out = h('button', { type: 'button', class: 'link', 'data-testid': 'sign-out' }, 'Sign out')
  out.addEventListener('click', () => {
    void post('/sign-out', {}).finally(() => location.assign('/ui/'))
  })
  const main = h('main', null)
  root.replaceChildren(
    h(
      'header',
      { class: 'bar' },
      h('a', { class: 'brand', href: '/ui/' }, 'ag-server review'),
      h('span', { class: 'who', 'data-testid': 'principal' }, s.principal),
      out,
    ),
    main,
  )
  return main
}

/** The time the page took to show its data, for the render benchmark (bench/ui.bench.mjs): laid out. */
function rendered(): void {
  // Reading a layout property lays the page out now, so the mark includes style and layout.
  void document.documentElement.offsetHeight
  performance.mark('ui:rendered')
  document.documentElement.dataset['rendered'] = 'true'
}

async function boot(): Promise<void> {
  const root = document.getElementById('app') as HTMLElement
  let problem: string | undefined
  // A one-time sign-in link (ag-mcp proposals open): its secret is in the fragment, which no
  // request carries; it leaves the address bar at once and is exchanged for the session cookie.
  if (location.hash.startsWith('#sign-in=')) {
    const secret = location.hash.slice('#sign-in='.length)
    history.replaceState(null, '', location.pathname + location.search)
    await post('/sign-in', { link: secret }).catch((e: unknown) => {
      problem = e instanceof ApiError ? e.message : 'the sign-in link could not be used'
    })
  }
  let session: SessionInfo
  try {
    session = await get<SessionInfo>('/session')
  } catch (e) {
    if (e instanceof ApiError && e.status === 401) {
      signInPage(root, problem ?? (e.message === 'not signed in' ? undefined : e.message))
      rendered()
      return
    }
    throw e
  }
  setCsrf(session.csrf)
  const main = shell(root, session)
  const params = new URLSearchParams(location.search)
  const m = /^\/ui\/p\/([^/]+)$/.exec(location.pathname)
  if (m) await proposalPage(main, decodeURIComponent(m[1] as string), params)
  else await listPage(main, session, params)
  rendered()
}

boot().catch((e: unknown) => {
  const root = document.getElementById('app') as HTMLElement
  root.replaceChildren(
    h('p', { class: 'alert', role: 'alert' }, `The page could not load: ${e instanceof Error ? e.message : String(e)}`),
  )
})
