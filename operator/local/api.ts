// AGWP calls to the private server with a token of this process (the agent's or the person's).
import { readFileSync } from 'node:fs'

export type Api = (method: string, path: string, body?: unknown) => Promise<unknown>

export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown>,
  ) {
    super(`${code}: ${message}`)
  }
}

export function client(url: string, tokenFile: string): Api {
  const token = readFileSync(tokenFile, 'utf8').trim()
  return async (method, path, body) => {
    const res = await fetch(`${url}/agwp/v1${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      redirect: 'error',
    })
    const json = (await res.json().catch(() => ({}))) as {
      error?: { code: string; message: string; details?: Record<string, unknown> }
    }
    if (!res.ok)
      throw new ApiError(json.error?.code ?? String(res.status), json.error?.message ?? '', json.error?.details ?? {})
    return json
  }
}

export interface ProposalSummary {
  id: string
  title: string
  state: string
  author: string
  target: string
  base: string | null
  head: string
}

/** Every proposal of `repo` (in `state`, if given), page after page. */
export async function listProposals(api: Api, repo: string, state?: string): Promise<ProposalSummary[]> {
  const out: ProposalSummary[] = []
  let cursor: string | undefined
  do {
    const q = new URLSearchParams({ limit: '500', ...(state ? { state } : {}), ...(cursor ? { cursor } : {}) })
    const r = (await api('GET', `/repos/${encodeURIComponent(repo)}/proposals?${q}`)) as {
      proposals: ProposalSummary[]
      next_cursor?: string
    }
    out.push(...r.proposals)
    cursor = r.next_cursor
  } while (cursor)
  return out
}
