// The page's calls to its server: JSON under /ui/api, the session cookie sent by the browser, the
// session's CSRF token in a header on every action. A refusal keeps the server's code and reason.

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message)
  }
}

let csrf = ''
export const setCsrf = (token: string): void => {
  csrf = token
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' }
  if (body !== undefined) headers['content-type'] = 'application/json'
  if (method !== 'GET') headers['x-agwp-csrf'] = csrf
  const res = await fetch(`/ui/api${path}`, {
    method,
    headers,
    credentials: 'same-origin',
    redirect: 'error',
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  })
  const json = (await res.json().catch(() => ({}))) as { error?: { code?: string; message?: string } }
  if (!res.ok)
    throw new ApiError(res.status, json.error?.code ?? String(res.status), json.error?.message ?? res.statusText)
  return json as T
}

export const get = <T>(path: string): Promise<T> => call<T>('GET', path)
export const post = <T>(path: string, body: unknown): Promise<T> => call<T>('POST', path, body)
