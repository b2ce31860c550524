// Codex's own MCP client, driven without a model: `codex app-server` (the JSON-RPC protocol its
// IDE extensions speak, over stdio) lists each configured server's status and tools
// (`mcpServerStatus/list`) and calls a tool on a thread's connection (`mcpServer/tool/call`).
import { spawn } from 'node:child_process'
import { createInterface } from 'node:readline'

interface Message {
  id?: number
  method?: string
  result?: Record<string, unknown>
  error?: { code: number; message: string }
}

export interface AppServer {
  request(method: string, params: Record<string, unknown>): Promise<Message>
  close(): Promise<void>
}

export function startAppServer(codex: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs: number): AppServer {
  const child = spawn(codex, ['app-server'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] })
  const waiting = new Map<number, (m: Message) => void>()
  let stderr = ''
  child.stderr.setEncoding('utf8')
  child.stderr.on('data', (s: string) => {
    stderr = (stderr + s).slice(-4000)
  })
  const exited = new Promise<void>((resolve) => child.on('close', () => resolve()))
  createInterface({ input: child.stdout }).on('line', (line) => {
    let m: Message
    try {
      m = JSON.parse(line) as Message
    } catch {
      return // not a protocol line
    }
    if (m.id !== undefined && m.method === undefined) waiting.get(m.id)?.(m)
  })
  let next = 0
  return {
    request: (method, params) =>
      new Promise<Message>((resolve, reject) => {
        const id = ++next
        const timer = setTimeout(() => {
          waiting.delete(id)
          reject(new Error(`codex app-server: no answer to ${method} within ${timeoutMs} ms; stderr: ${stderr}`))
        }, timeoutMs)
        waiting.set(id, (m) => {
          clearTimeout(timer)
          waiting.delete(id)
          resolve(m)
        })
        child.stdin.write(`${JSON.stringify({ id, method, params })}\n`)
      }),
    close: async () => {
      child.stdin.end()
      const killer = setTimeout(() => child.kill('SIGKILL'), 5000)
      child.kill('SIGTERM')
      await exited
      clearTimeout(killer)
    },
  }
}

export interface CodexView {
  /** The server's tool names, as Codex's client listed them. */
  tools: string[]
  /** What the tool call returned (its first text), or why it did not. */
  call: { ok: boolean; text: string }
}

/** Lists the tools of `server` and calls `tool` with `args`, through Codex's client. */
export async function codexView(
  app: AppServer,
  cwd: string,
  server: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<CodexView> {
  const init = await app.request('initialize', { clientInfo: { name: 'ag-mcp-test-hosts', version: '1' } })
  if (init.error) throw new Error(`initialize: ${init.error.message}`)
  // A thread in the project, as a session has: its MCP connections start there (a listing
  // without a thread starts the server elsewhere, outside the repository).
  const thread = await app.request('thread/start', { cwd, ephemeral: true })
  const threadId = (thread.result?.['thread'] as { id?: string } | undefined)?.id
  if (!threadId) throw new Error(`thread/start: ${JSON.stringify(thread).slice(0, 300)}`)
  const status = await app.request('mcpServerStatus/list', { serverName: server, threadId })
  if (status.error) throw new Error(`mcpServerStatus/list: ${status.error.message}`)
  const data = (status.result?.['data'] ?? []) as { name: string; tools?: Record<string, unknown> }[]
  const tools = Object.keys(data.find((s) => s.name === server)?.tools ?? {})
  const called = await app.request('mcpServer/tool/call', { server, threadId, tool, arguments: args })
  if (called.error) return { tools, call: { ok: false, text: `mcpServer/tool/call: ${called.error.message}` } }
  const content = (called.result?.['content'] ?? []) as { type: string; text?: string }[]
  return {
    tools,
    call: { ok: called.result?.['isError'] !== true, text: content.find((c) => c.type === 'text')?.text ?? '' },
  }
}
