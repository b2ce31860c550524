// A small MCP client over stdio: spawns a server, speaks the modern era (2026-07-28, every
// request carries _meta) or a legacy one (initialize first), and calls tools.
import { spawn } from 'node:child_process'
import type { ChildProcessWithoutNullStreams } from 'node:child_process'
import { createInterface } from 'node:readline'

export interface ToolResult {
  summary: string
  text: string
  structured: Record<string, unknown> | undefined
  isError: boolean
}

type Pending = { resolve: (v: Record<string, unknown>) => void; reject: (e: Error) => void }

export class McpStdioClient {
  private readonly child: ChildProcessWithoutNullStreams
  private readonly pending = new Map<number, Pending>()
  private nextId = 1
  private revision: string
  private readonly legacy: boolean
  readonly stderr: string[] = []

  constructor(
    command: string,
    args: string[],
    opts: { revision?: string; env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) {
    this.revision = opts.revision ?? '2026-07-28'
    this.legacy = this.revision !== '2026-07-28'
    this.child = spawn(command, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: opts.env ?? process.env,
      ...(opts.cwd ? { cwd: opts.cwd } : {}),
    })
    createInterface({ input: this.child.stdout }).on('line', (line) => this.onLine(line))
    createInterface({ input: this.child.stderr }).on('line', (line) => this.stderr.push(line))
    this.child.on('exit', () => {
      for (const p of this.pending.values()) p.reject(new Error('the server exited'))
      this.pending.clear()
    })
  }

  /** Modern era: server/discover. Legacy era: the initialize handshake. */
  async start(): Promise<Record<string, unknown>> {
    if (!this.legacy) return this.request('server/discover', {})
    const result = await this.request('initialize', {
      protocolVersion: this.revision,
      capabilities: {},
      clientInfo: { name: 'ag-mcp-scripted-agent', version: '1.0.0' },
    })
    this.revision = String(result['protocolVersion'])
    this.notify('notifications/initialized', {})
    return result
  }

  request(method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> {
    const id = this.nextId++
    const body = this.legacy
      ? params
      : {
          ...params,
          _meta: {
            'io.modelcontextprotocol/protocolVersion': this.revision,
            'io.modelcontextprotocol/clientCapabilities': {},
            'io.modelcontextprotocol/clientInfo': { name: 'ag-mcp-scripted-agent', version: '1.0.0' },
          },
        }
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject })
      this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params: body })}\n`)
    })
  }

  notify(method: string, params: Record<string, unknown>): void {
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`)
  }

  async callTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    const r = await this.request('tools/call', { name, arguments: args })
    const content = r['content'] as { type: string; text: string }[]
    const text = content.map((c) => c.text).join('\n')
    return {
      summary: text.split('\n')[0] ?? '',
      text,
      structured: r['structuredContent'] as Record<string, unknown> | undefined,
      isError: r['isError'] === true,
    }
  }

  async close(): Promise<number | null> {
    this.child.stdin.end()
    if (this.child.exitCode !== null) return this.child.exitCode
    return new Promise((resolve) => this.child.on('exit', (code) => resolve(code)))
  }

  private onLine(line: string): void {
    let msg: { id?: number; result?: Record<string, unknown>; error?: { code: number; message: string } }
    try {
      msg = JSON.parse(line) as typeof msg
    } catch {
      return
    }
    if (typeof msg.id !== 'number') return
    const p = this.pending.get(msg.id)
    if (!p) return
    this.pending.delete(msg.id)
    if (msg.error) p.reject(new Error(`${msg.error.code}: ${msg.error.message}`))
    else p.resolve(msg.result ?? {})
  }
}
