import crypto from 'node:crypto'
import type { Ctx } from './context.ts'
import { conflict, invalid, notFound } from './errors.ts'
import { publicKeyObject } from './keys.ts'
import type { Repo } from './repos.ts'
import type { StateReader } from './state.ts'
import type { ProposalRec, ProvenanceRec } from './types.ts'

// Provenance that is verified. The key holder signs a canonical JSON statement naming the
// repository, the proposal, its head commit and tree and the target branch; the server
// accepts the record only when the signature checks out with a key of the proposal's
// author that is valid, and the statement names the proposal as it is now. A later
// revision makes the record stale. The private key never reaches the server or ag-mcp.

export const STATEMENT_TYPE = 'agwp-provenance/v1'

export interface Statement {
  type: typeof STATEMENT_TYPE
  repository: string
  proposal: string
  head: string
  tree: string
  target: string
}

/** The one byte string that is signed: keys sorted, no whitespace, UTF-8. */
export function canonicalStatement(s: Statement): string {
  const o = s as unknown as Record<string, string>
  return `{${Object.keys(o)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`)
    .join(',')}}`
}

export async function statementFor(
  repo: Repo,
  p: Pick<ProposalRec, 'repo' | 'id' | 'head' | 'target'>,
): Promise<Statement> {
  return {
    type: STATEMENT_TYPE,
    repository: p.repo,
    proposal: p.id,
    head: p.head,
    tree: await repo.commitTree(p.head),
    target: p.target,
  }
}

export function sign(statement: string, key: crypto.KeyObject): string {
  return crypto.sign(null, Buffer.from(statement, 'utf8'), key).toString('base64')
}

export type Refusal = {
  ok: false
  reason:
    | 'unknown_key'
    | 'wrong_principal'
    | 'revoked_key'
    | 'bad_signature'
    | 'malformed_statement'
    | 'stale_head'
    | 'statement_mismatch'
  message: string
}
export type Verdict = { ok: true } | Refusal

const refuse = (reason: Refusal['reason'], message: string): Refusal => ({ ok: false, reason, message })

/**
 * Judge a record against the proposal as it is now. `at` is when the record was (or is
 * being) attached: the key must have been registered and not revoked then.
 */
export async function verifyRecord(
  state: StateReader,
  repo: Repo,
  p: ProposalRec,
  r: { key_id: string; signature: string; statement: string },
  at: string,
): Promise<Verdict> {
  const key = await state.get('keys', r.key_id)
  if (!key) return refuse('unknown_key', `key '${r.key_id.slice(0, 64)}' is not registered (ag-server key add)`)
  if (key.principal !== p.author_principal)
    return refuse(
      'wrong_principal',
      `key ${key.id} belongs to ${key.principal}, not to the proposal's author ${p.author_principal}`,
    )
  if (key.created_at > at || (key.revoked_at !== undefined && key.revoked_at <= at))
    return refuse('revoked_key', `key ${key.id} was not valid at signing (revoked ${key.revoked_at ?? 'later'})`)
  const sig = Buffer.from(r.signature, 'base64')
  let good = false
  if (sig.length === 64 && sig.toString('base64') === r.signature.trim()) {
    try {
      good = crypto.verify(null, Buffer.from(r.statement, 'utf8'), publicKeyObject(key), sig)
    } catch {
      good = false
    }
  }
  if (!good) return refuse('bad_signature', `the signature does not verify over the statement with key ${key.id}`)
  let parsed: unknown
  try {
    parsed = JSON.parse(r.statement)
  } catch {
    parsed = undefined
  }
  const fields = ['head', 'proposal', 'repository', 'target', 'tree', 'type']
  if (
    typeof parsed !== 'object' ||
    parsed === null ||
    Object.keys(parsed).sort().join(',') !== fields.join(',') ||
    Object.values(parsed).some((v) => typeof v !== 'string') ||
    canonicalStatement(parsed as Statement) !== r.statement
  )
    return refuse(
      'malformed_statement',
      `the statement is not a canonical ${STATEMENT_TYPE} document (sorted keys ${fields.join(', ')}; no whitespace)`,
    )
  const s = parsed as Statement
  const want = await statementFor(repo, p)
  if (s.type !== STATEMENT_TYPE) return refuse('malformed_statement', `statement type must be ${STATEMENT_TYPE}`)
  if (s.head !== want.head)
    return refuse(
      'stale_head',
      `the statement is for head ${s.head.slice(0, 12)}, not the proposal's current head ${want.head.slice(0, 12)}`,
    )
  for (const f of ['repository', 'proposal', 'tree', 'target'] as const)
    if (s[f] !== want[f])
      return refuse('statement_mismatch', `the statement names ${f} '${s[f].slice(0, 100)}', not '${want[f]}'`)
  return { ok: true }
}

/** Provenance as the proposal view and the integration rule see it. */
export async function provenanceStatus(
  state: StateReader,
  repo: Repo,
  p: ProposalRec,
  required: boolean,
): Promise<Record<string, unknown>> {
  const rec = p.provenance
  if (!rec) return { required, status: required ? 'missing' : 'not_required' }
  const out: Record<string, unknown> = {
    required,
    key_id: rec.key_id,
    head: rec.head,
    attached_by: rec.attached_by,
    attached_at: rec.attached_at,
  }
  if (rec.head !== p.head) return { ...out, status: 'stale', reason: 'the record is for an older head' }
  const v = await verifyRecord(state, repo, p, rec, rec.attached_at)
  return v.ok ? { ...out, status: 'verified' } : { ...out, status: 'unverified', reason: v.message }
}

/** Verify and store a record for the proposal's current head; refused records change nothing. */
export async function attachRecord(
  ctx: Ctx,
  id: string,
  by: string,
  body: { key_id: string; signature: string; statement: string; head?: string },
): Promise<ProposalRec> {
  const p0 = await ctx.state.get('proposals', id)
  if (!p0) throw notFound(`proposal '${id.slice(0, 64)}' not found`, { proposal: id.slice(0, 64) })
  const repo = ctx.repos.get(p0.repo)
  // Key validity is judged at the state's clock (the database's on PostgreSQL).
  const at = (await ctx.state.now()).toISOString()
  const v = await verifyRecord(ctx.state, repo, p0, body, at)
  // Checked again under the repository's lock (revise holds it too), so the record is
  // attached to the head it was verified against.
  return ctx.state.tx([`repo:${p0.repo}`], async (t) => {
    const p = (await t.get('proposals', id)) as ProposalRec
    if (p.state !== 'open') throw conflict(`proposal is ${p.state}`, { state: p.state })
    if (p.head !== p0.head || (body.head !== undefined && body.head !== p.head))
      throw conflict('head is not the current proposal head', { head: p.head })
    if (!v.ok) throw invalid(`provenance refused: ${v.message}`, { reason: v.reason })
    const rec: ProvenanceRec = {
      key_id: body.key_id,
      signature: body.signature,
      statement: body.statement,
      head: p.head,
      attached_by: by,
      attached_at: at,
    }
    const next: ProposalRec = { ...p, provenance: rec, updated_at: t.now.toISOString() }
    t.write(
      { c: 'proposals', k: id, at: ['provenance'], v: rec },
      { c: 'proposals', k: id, at: ['updated_at'], v: next.updated_at },
    )
    return next
  })
}
