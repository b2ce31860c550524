// --write-path for tools that write a workspace's changes (propose, proposal_revise): every path
// the workspace changes, as the server holds it now, for the core to check before the call leaves.
import type { ToolArgs } from '../../core/src/plugin-api.ts'
import { execute, type AgwpContext } from './executor.ts'

export async function writtenPaths(args: ToolArgs, ctx: AgwpContext): Promise<string[]> {
  const ws = await execute(ctx, args, { method: 'GET', path: '/workspaces/{workspace}' })
  const changes = ws['changes']
  if (!Array.isArray(changes)) throw new Error('the workspace has no list of changes')
  return changes.map((c: unknown) => {
    const p = (c as { path?: unknown }).path
    if (typeof p !== 'string') throw new Error('a workspace change without a path')
    return p
  })
}
