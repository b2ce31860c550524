// The AGWP world a test runs against, seeded in this process before a server starts: an
// ag-server data directory, repositories added from source directories, and people with a token
// for every repository and the same role in each. The test fixtures (test/server/helpers.ts,
// test/conformance/agwp-fixture.ts) build on it. (Benches and the demo drive the CLI instead:
// bench/agwp-world.mjs.)
import { adminMint, adminSetPolicy, adminSetRole, repoAdd } from '../../server/src/admin.ts'
import { initDataDir } from '../../server/src/datadir.ts'
import { openState } from '../../server/src/open-state.ts'
import type { Policy, Role, Scope } from '../../server/src/types.ts'

export interface Person {
  principal: string
  scopes: Scope[]
  /** The same role in every repository; null: none (the token alone, as for a stranger). */
  role: Role | null
}

export interface WorldSpec<Name extends string = string> {
  /** Repository name -> the source directory it is cloned from. */
  repos: Record<string, string>
  people: Record<Name, Person>
  /** A policy per repository name. */
  policy?: Record<string, Partial<Policy>>
  /** A PostgreSQL store's URL (see docs/scale-out.md); without it, the embedded journal. */
  store?: string
}

/** Seeds `data` (which must not exist yet); returns each person's token by name. */
export async function seedWorld<Name extends string>(
  data: string,
  spec: WorldSpec<Name>,
): Promise<{ tokens: Record<Name, string> }> {
  const store = spec.store ? { store: spec.store } : {}
  await initDataDir(data, store)
  for (const [name, src] of Object.entries(spec.repos)) repoAdd(data, name, src)
  const repos = Object.keys(spec.repos)
  const state = await openState({ dataDir: data, ...store })
  try {
    const tokens = {} as Record<Name, string> // filled for every name just below
    for (const [name, p] of Object.entries(spec.people) as [Name, Person][]) {
      tokens[name] = (await adminMint(state, { principal: p.principal, scopes: p.scopes, repos, ttl_s: 3600 })).token
      if (p.role !== null) for (const r of repos) await adminSetRole(state, r, p.principal, p.role)
    }
    for (const [r, policy] of Object.entries(spec.policy ?? {})) await adminSetPolicy(state, r, policy)
    return { tokens }
  } finally {
    await state.close()
  }
}
