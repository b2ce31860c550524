// `ag-server init`, `repo add`, `role set`, `policy set`, `task add`: the data directory, its
// repositories, who may do what on them, and their tasks.
import type { CommandArgs } from '../../../lib/cli/commands.ts'
import { UsageError, listValue, numberValue, stringValue } from '../../../lib/cli/flags.ts'
import { repoAdd } from '../admin.ts'
import { initDataDir, isDataDir } from '../datadir.ts'
import { isPostgresUrl } from '../open-state.ts'
import { redactUrl } from '../pg/url.ts'
import type { Policy, Role } from '../types.ts'
import { validateBody } from '../validate.ts'
import { dataDir, withAdmin, type CliContext } from './admin.ts'

export async function init({ positionals, values }: CommandArgs, { out }: CliContext): Promise<void> {
  const dir = positionals[0] ?? ''
  const store = stringValue(values, 'store')
  if (store !== undefined && !isPostgresUrl(store))
    throw new UsageError(`--store must be a postgres:// URL, got ${redactUrl(store)}`)
  const { adminTokenFile } = await initDataDir(dir, store !== undefined ? { store } : {})
  out(`initialized ${dir}; admin token written to ${adminTokenFile} (mode 0600)`)
}

export function add({ values, positionals }: CommandArgs, { out }: CliContext): void {
  const from = stringValue(values, 'from')
  if ((from === undefined) === (values['empty'] !== true))
    throw new UsageError('give exactly one of --from PATH or --empty')
  if (values['shared'] === true && from === undefined)
    throw new UsageError('--shared borrows the objects of --from PATH: name it')
  const dir = dataDir(stringValue(values, 'data'))
  if (!isDataDir(dir)) throw new Error(`${dir} is not an ag-server data directory`)
  const name = positionals[0] ?? ''
  repoAdd(dir, name, from, stringValue(values, 'branch') ?? 'main', values['shared'] === true)
  out(`repository ${name} added`)
}

export async function setRole({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const repo = stringValue(values, 'repo') ?? ''
  const body = { principal: stringValue(values, 'principal') ?? '', role: stringValue(values, 'role') as Role | 'none' }
  validateBody('AdminRoleSetRequest', body)
  await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.role(repo, body.principal, body.role))
  out(`${body.principal} is ${body.role} on ${repo}`)
}

export async function setPolicy({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const p: Partial<Policy> = {}
  const approvals = numberValue(values, 'required-approvals')
  if (approvals !== undefined) p.required_approvals = approvals
  const provenance = values['require-provenance-for-agents']
  if (typeof provenance === 'boolean') p.require_provenance_for_agents = provenance
  if (values['protected-branches'] !== undefined) p.protected_branches = listValue(values, 'protected-branches')
  validateBody('AdminPolicySetRequest', p)
  const repo = stringValue(values, 'repo') ?? ''
  out(JSON.stringify(await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.policy(repo, p))))
}

export async function addTask({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const text = stringValue(values, 'body')
  const body = {
    title: stringValue(values, 'title') ?? '',
    ...(text !== undefined ? { body: text } : {}),
    ...(values['paths'] !== undefined ? { paths: listValue(values, 'paths') } : {}),
  }
  validateBody('AdminTaskCreateRequest', body)
  const repo = stringValue(values, 'repo') ?? ''
  const t = await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.task(repo, body))
  out(t.id)
}
