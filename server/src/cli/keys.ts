// `ag-server key add|list|revoke` (principals' Ed25519 public keys) and `provenance sign|attach`
// (records signed with a private key read from a file only its owner can read, never a flag).
import fs from 'node:fs'
import type { CommandArgs } from '../../../lib/cli/commands.ts'
import { UsageError, stringValue } from '../../../lib/cli/flags.ts'
import { parsePrivateKey } from '../keys.ts'
import { sign } from '../provenance.ts'
import { validateBody } from '../validate.ts'
import { dataDir, withAdmin, type CliContext } from './admin.ts'

export async function addKey({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const label = stringValue(values, 'label')
  const body = {
    principal: stringValue(values, 'principal') ?? '',
    public_key: fs.readFileSync(stringValue(values, 'ed25519') ?? '', 'utf8'),
    ...(label !== undefined ? { label } : {}),
  }
  validateBody('AdminKeyAddRequest', body)
  const k = await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.keyAdd(body))
  out(`added key ${k.id} for ${body.principal}`)
}

export async function listKeys({ values }: CommandArgs, { out }: CliContext): Promise<void> {
  const principal = stringValue(values, 'principal')
  out(JSON.stringify(await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.keys(principal)), null, 2))
}

export async function revokeKey({ values, positionals }: CommandArgs, { out }: CliContext): Promise<void> {
  const id = positionals[0] ?? ''
  await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.keyRevoke(id))
  out(`revoked ${id}`)
}

/** A private key is read from a file only its owner can read (never from a flag). */
function readPrivateKeyFile(file: string): string {
  const st = fs.statSync(file)
  if (process.platform !== 'win32' && (st.mode & 0o077) !== 0)
    throw new Error(
      `private key file ${file} is readable by others (mode ${(st.mode & 0o777).toString(8)}); chmod 600 it`,
    )
  return fs.readFileSync(file, 'utf8')
}

export async function signProvenance({ values, positionals }: CommandArgs, { out }: CliContext): Promise<void> {
  const proposal = positionals[0] ?? ''
  const attach = values['attach'] === true
  const { key, keyId } = parsePrivateKey(readPrivateKeyFile(stringValue(values, 'key-file') ?? ''))
  const record = await withAdmin(dataDir(stringValue(values, 'data')), async (adm) => {
    const s = await adm.statement(proposal)
    const r = { key_id: keyId, signature: sign(s.statement, key), statement: s.statement }
    if (attach) await adm.provenance(s.proposal, { ...r, head: s.head })
    return r
  })
  const file = stringValue(values, 'out')
  if (file !== undefined) fs.writeFileSync(file, `${JSON.stringify(record)}\n`)
  else out(JSON.stringify(record))
  if (attach) out(`provenance signed with ${keyId} and attached to ${proposal}`)
}

type SignedRecord = { key_id: string; signature: string; statement: string; head?: string }

export async function attachProvenance({ values, positionals }: CommandArgs, { out }: CliContext): Promise<void> {
  const proposal = positionals[0] ?? ''
  const recordFile = stringValue(values, 'record')
  let body: SignedRecord
  if (recordFile !== undefined) body = JSON.parse(fs.readFileSync(recordFile, 'utf8')) as SignedRecord
  else {
    const sigFile = stringValue(values, 'signature-file')
    const sig = sigFile ? fs.readFileSync(sigFile, 'utf8').trim() : stringValue(values, 'signature')
    const keyId = stringValue(values, 'key-id')
    const statement = stringValue(values, 'statement')
    if (!sig || keyId === undefined || statement === undefined)
      throw new UsageError('give --record FILE, or --key-id, --statement and --signature or --signature-file')
    body = { key_id: keyId, signature: sig, statement }
  }
  const head = stringValue(values, 'head')
  if (head) body = { ...body, head }
  validateBody('ProvenanceAttachRequest', body)
  await withAdmin(dataDir(stringValue(values, 'data')), (adm) => adm.provenance(proposal, body))
  out(`provenance verified and attached to ${proposal}`)
}
