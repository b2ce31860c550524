import { checkRepoName } from '../paths.ts'
import * as ws from '../workspaces.ts'
import type { Router } from '../router.ts'
import { q } from './params.ts'

// Workspaces: create, read, write, move, delete files, diff, discard.

export function registerWorkspaceRoutes(router: Router): void {
  router.add(
    'POST',
    '/repos/:repo/workspaces',
    async (r) => {
      checkRepoName(r.params['repo'])
      const b = r.body as { base?: string }
      return {
        status: 201,
        body: ws.viewWorkspace(await ws.createWorkspace(r.ctx, r.caller, r.params['repo'] ?? '', b.base)),
      }
    },
    'WorkspaceCreateRequest',
  )
  router.add('GET', '/workspaces/:id', async (r) => ({
    body: ws.viewWorkspace(await ws.getWorkspace(r.ctx, r.caller, r.params['id'] ?? '', false)),
  }))
  router.add('GET', '/workspaces/:id/file', async (r) => ({
    body: await ws.readWorkspacePath(r.ctx, r.caller, r.params['id'] ?? '', q(r, 'path')),
  }))
  router.add(
    'PUT',
    '/workspaces/:id/files',
    async (r) => ({
      body: await ws.writeFile(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof ws.writeFile>[3]),
    }),
    'WorkspaceFileWriteRequest',
  )
  router.add('DELETE', '/workspaces/:id/files', async (r) => ({
    body: await ws.deleteFile(r.ctx, r.caller, r.params['id'] ?? '', q(r, 'path'), q(r, 'if_match')),
  }))
  router.add(
    'POST',
    '/workspaces/:id/moves',
    async (r) => ({
      body: await ws.moveFile(r.ctx, r.caller, r.params['id'] ?? '', r.body as Parameters<typeof ws.moveFile>[3]),
    }),
    'WorkspaceMoveRequest',
  )
  router.add('GET', '/workspaces/:id/diff', async (r) => ({
    body: await ws.workspaceDiff(r.ctx, r.caller, r.params['id'] ?? ''),
  }))
  router.add('DELETE', '/workspaces/:id', async (r) => ({
    body: await ws.discardWorkspace(r.ctx, r.caller, r.params['id'] ?? ''),
  }))
}
