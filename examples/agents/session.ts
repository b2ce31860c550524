// A scripted agent: one whole session through ag-mcp, the way a model would drive it.
// claim a task → read → workspace → lease → write → check the diff → propose → note → release.
// It works on any repository: it looks at what is there first (a readme of any spelling, or
// none; a docs/ folder or not) and adds a guide under a path nothing holds yet.
import { McpStdioClient } from './mcp-client.ts'
import type { ToolResult } from './mcp-client.ts'

export interface SessionOptions {
  /** The ag-mcp command line (e.g. [process.execPath, 'dist/ag-mcp.mjs', '--upstream', …]). */
  command: string[]
  /** Default: the first repository whoami names a role on (local mode serves just one). */
  repo?: string
  revision?: string
  env?: NodeJS.ProcessEnv
  print?: (line: string) => void
}

export interface SessionOutcome {
  proposal: string | undefined
  runId: string | undefined
  failures: number
  /** The tools whose calls failed, in order. */
  failed: string[]
  /** ag-mcp's exit code. */
  exitCode: number | null
  /** Whether the session did what it set out to do: a proposal, no failed call, ag-mcp exited 0. */
  ok: boolean
}

interface DirEntry {
  name: string
  path: string
  type: string
}

/** A readme at the top, whatever its case or extension (README.md, readme.md, README.rst, README). */
const README = /^readme(\.(md|markdown|txt|rst|adoc))?$/i

/**
 * The first of DIR/getting-started.md, DIR/getting-started-2.md, … that `taken` (lower-cased
 * paths) lacks, in docs/, or at the top when something that is not a folder is named docs.
 */
export function freshGuidePath(taken: ReadonlySet<string>, docsIsFolder: boolean): string {
  const dir = docsIsFolder || !taken.has('docs') ? 'docs/' : ''
  for (let i = 1; ; i++) {
    const path = `${dir}getting-started${i === 1 ? '' : `-${i}`}.md`
    if (!taken.has(path.toLowerCase())) return path
  }
}

export async function runSession(o: SessionOptions): Promise<SessionOutcome> {
  const print = o.print ?? ((l: string) => process.stdout.write(`${l}\n`))
  const [cmd, ...args] = o.command
  if (!cmd) throw new Error('no command')
  const client = new McpStdioClient(cmd, args, {
    ...(o.revision ? { revision: o.revision } : {}),
    ...(o.env ? { env: o.env } : {}),
  })
  let failures = 0
  const failed: string[] = []
  const call = async (name: string, a: Record<string, unknown>): Promise<ToolResult> => {
    const r = await client.callTool(name, a)
    if (r.isError) {
      failures++
      failed.push(name)
    }
    print(
      `${r.isError ? '✗' : '→'} ${name} ${JSON.stringify(a, (k, v: unknown) => (k === 'content' && typeof v === 'string' && v.length > 40 ? `${v.slice(0, 40)}…` : v))}`,
    )
    print(`    ${r.summary}`)
    return r
  }
  const started = await client.start()
  const revision = (started['protocolVersion'] as string | undefined) ?? '2026-07-28'
  const tools = (await client.request('tools/list', {}))['tools'] as { name: string }[]
  print(`MCP ${revision}: ${tools.length} tools offered`)

  const me = await call('whoami', {})
  const repo = o.repo ?? Object.keys((me.structured?.['roles'] as Record<string, unknown> | undefined) ?? {})[0]
  if (!repo) throw new Error('no repository: pass one, or use a token with a role on one')
  const open = await call('task_list', { repo, state: 'open' })
  const tasks = (open.structured?.['tasks'] as { id: string; title: string }[] | undefined) ?? []
  const task = tasks[0]
  // With no task to claim (local mode on your own repository), the agent works without a run.
  if (!task) print('no open task: working without a claim')
  const claim = task ? await call('task_claim', { repo, task: task.id, ttl_s: 600 }) : undefined
  const runId = claim?.structured?.['run_id'] as string | undefined
  await call('log', { repo, limit: 3 })
  // What is there: the top level (and docs/, if any), so every path read exists and every path
  // written is new or one just read.
  const list = async (path: string): Promise<DirEntry[]> =>
    ((await call('file_read', { repo, ...(path ? { path } : {}) })).structured?.['entries'] as
      | DirEntry[]
      | undefined) ?? []
  const top = await list('')
  const readmeEntry = top.find((e) => e.type === 'file' && README.test(e.name))
  const docsIsFolder = top.some((e) => e.type === 'dir' && e.name === 'docs')
  const docs = docsIsFolder ? await list('docs') : []
  const guide = freshGuidePath(new Set([...top, ...docs].map((e) => e.path.toLowerCase())), docsIsFolder)
  const readRes = readmeEntry ? await call('file_read', { repo, path: readmeEntry.path }) : undefined
  // ag-mcp shows a file cut to --max-output-bytes and cleaned of hidden characters: writing that
  // view back would cut the file or drop its characters, so such a readme is left as it is.
  const whole = readRes && readRes.structured?.['truncated'] !== true && !readRes.structured?.['sanitized']
  if (readRes && !whole) print(`${readmeEntry?.path} was not shown whole (cut or cleaned): leaving it as it is`)
  const readme = whole ? readRes : undefined
  const ws = await call('workspace_create', { repo, ...(runId ? { run_id: runId } : {}) })
  const workspace = ws.structured?.['id'] as string
  const lease = await call('lease_acquire', {
    repo,
    paths: [guide, ...(readmeEntry && readme ? [readmeEntry.path] : [])],
    ttl_s: 600,
    ...(runId ? { run_id: runId } : {}),
  })
  const leaseId = lease.structured?.['id'] as string | undefined
  // Every call names its repository: under --repo, ag-mcp requires it of calls that act on an id.
  const inRun = { repo, ...(runId ? { run_id: runId } : {}), ...(leaseId ? { lease_id: leaseId } : {}) }
  await call('file_write', {
    workspace,
    path: guide,
    content: '# Getting started\n\nRun `make` to build, then `make test`.\n',
    ...inRun,
  })
  if (readmeEntry && readme) {
    const blob = readme.structured?.['blob'] as string | undefined
    const text = (readme.structured?.['content'] as string | undefined) ?? ''
    await call('file_write', {
      workspace,
      path: readmeEntry.path,
      content: `${text.trimEnd()}\n\nSee ${guide}.\n`,
      ...(blob ? { if_match: blob } : {}),
      ...inRun,
    })
  }
  await call('workspace_status', { repo, workspace, diff: true })
  const proposed = await call('propose', {
    repo,
    workspace,
    title: task ? `Add a getting-started guide (${task.title})` : 'Add a getting-started guide',
    description: readmeEntry && readme ? `Adds ${guide} and links it from ${readmeEntry.path}.` : `Adds ${guide}.`,
    ...(task ? { task: task.id } : {}),
    reasoning:
      'New contributors need onboarding docs; a short guide linked from the README is the smallest change that serves it.',
    ...(runId ? { run_id: runId } : {}),
  })
  const proposal = proposed.structured?.['id'] as string | undefined
  if (runId) {
    await call('run_update', {
      repo,
      run_id: runId,
      note: `Proposed ${proposal ?? '(failed)'}; a reviewer should check the wording.`,
    })
    await call('run_release', {
      repo,
      run_id: runId,
      outcome: proposal ? 'done' : 'blocked',
      note: proposal ? `proposal ${proposal}` : 'propose failed',
    })
  }
  if (proposal) await call('proposal_list', { repo, proposal })
  const code = await client.close()
  print(`ag-mcp exited with ${String(code)}`)
  const ok = proposal !== undefined && failures === 0 && code === 0
  // The last line says what the exit code will say.
  print(
    ok
      ? `done: proposed ${proposal}; every call succeeded`
      : `failed: ${[
          ...(failures > 0 ? [`${failures} call(s) failed (${failed.join(', ')})`] : []),
          ...(proposal === undefined ? ['no proposal was made'] : []),
          ...(code !== 0 ? [`ag-mcp exited with ${String(code)}`] : []),
        ].join('; ')}`,
  )
  return { proposal, runId, failures, failed, exitCode: code, ok }
}
