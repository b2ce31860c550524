import type { Router } from './router.ts'
import { registerRepoRoutes } from './routes/repos.ts'
import { registerReadRoutes } from './routes/reads.ts'
import { registerWorkspaceRoutes } from './routes/workspaces.ts'
import { registerGateRoutes, registerProposalRoutes } from './routes/proposals.ts'
import { registerCoordinationRoutes } from './routes/coordination.ts'

// The AGWP v1 agent-facing endpoints, one module per resource. Each handler: authorize, call one
// service, shape.

export function registerRoutes(router: Router): void {
  registerRepoRoutes(router)
  registerReadRoutes(router)
  registerWorkspaceRoutes(router)
  registerProposalRoutes(router)
  registerGateRoutes(router)
  registerCoordinationRoutes(router)
}
