import crypto from 'node:crypto'
import { conflict, invalid, notFound } from './errors.ts'
import type { State, StateReader } from './state.ts'
import type { KeyRec } from './types.ts'

// Signing keys of principals (Ed25519 public keys, verified in process with node:crypto).
// A key belongs to one principal for good: it is revoked, never deleted or moved, so a
// record signed with it can always be judged against the key's validity at the time.

const PRINCIPAL_RE = /^(agent|human):[a-z0-9][a-z0-9._-]{0,63}$/

/** Raw 32-byte Ed25519 public key from a PEM (SPKI) document or an OpenSSH `ssh-ed25519` line. */
export function parsePublicKey(text: string): Buffer {
  const s = text.trim()
  const ssh = /^ssh-ed25519\s+([A-Za-z0-9+/=]+)(\s.*)?$/.exec(s)
  if (ssh) {
    const blob = Buffer.from(ssh[1] as string, 'base64')
    // string "ssh-ed25519", then string <32 bytes>, each with a 4-byte big-endian length
    const n = blob.length >= 4 ? blob.readUInt32BE(0) : -1
    const kind = blob.subarray(4, 4 + n).toString('latin1')
    const at = 4 + n
    const len = blob.length >= at + 4 ? blob.readUInt32BE(at) : -1
    if (kind !== 'ssh-ed25519' || len !== 32 || blob.length !== at + 4 + 32)
      throw invalid('public key: malformed ssh-ed25519 line', { field: 'public_key' })
    return Buffer.from(blob.subarray(at + 4))
  }
  let key: crypto.KeyObject
  try {
    key = crypto.createPublicKey(s)
  } catch {
    throw invalid('public key: not a PEM public key or an ssh-ed25519 line', { field: 'public_key' })
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw invalid(`public key: an Ed25519 key is required, not ${key.asymmetricKeyType ?? 'unknown'}`, {
      field: 'public_key',
    })
  return rawOf(key)
}

function rawOf(key: crypto.KeyObject): Buffer {
  const x = key.export({ format: 'jwk' }).x
  if (typeof x !== 'string') throw new Error('Ed25519 key without x')
  return Buffer.from(x, 'base64url')
}

export function keyIdOf(raw: Buffer): string {
  return `ed25519-${crypto.createHash('sha256').update(raw).digest('hex').slice(0, 16)}`
}

export function publicKeyObject(rec: KeyRec): crypto.KeyObject {
  return crypto.createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(rec.public_key, 'base64').toString('base64url') },
    format: 'jwk',
  })
}

/** Private key (PEM, PKCS#8) for signing; returns it with the id of its public half. */
export function parsePrivateKey(text: string): { key: crypto.KeyObject; keyId: string } {
  let key: crypto.KeyObject
  try {
    key = crypto.createPrivateKey(text)
  } catch {
    throw invalid('private key: not a PEM (PKCS#8) private key; create one with `openssl genpkey -algorithm ed25519`')
  }
  if (key.asymmetricKeyType !== 'ed25519')
    throw invalid(`private key: an Ed25519 key is required, not ${key.asymmetricKeyType ?? 'unknown'}`)
  return { key, keyId: keyIdOf(rawOf(crypto.createPublicKey(key))) }
}

export function viewKey(k: KeyRec): Record<string, unknown> {
  return { ...k }
}

export function keyAdd(state: State, b: { principal: string; public_key: string; label?: string }): Promise<KeyRec> {
  if (!PRINCIPAL_RE.test(b.principal))
    throw invalid('principal must be agent:<name> or human:<name>', { field: 'principal' })
  const raw = parsePublicKey(b.public_key)
  const id = keyIdOf(raw)
  return state.tx([`key:${id}`], async (t) => {
    const old = await t.get('keys', id)
    if (old)
      throw conflict(
        old.principal === b.principal && old.revoked_at === undefined
          ? `key ${id} is already registered for ${old.principal}`
          : `key ${id} is already registered for ${old.principal}${old.revoked_at !== undefined ? ' (revoked)' : ''}; a key belongs to one principal and is never reused`,
        { key_id: id },
      )
    const rec: KeyRec = {
      id,
      principal: b.principal,
      algorithm: 'ed25519',
      public_key: raw.toString('base64'),
      created_at: t.now.toISOString(),
    }
    if (b.label !== undefined) rec.label = b.label
    t.write({ c: 'keys', k: id, v: rec })
    return rec
  })
}

export async function keyList(state: StateReader, principal?: string): Promise<KeyRec[]> {
  return (await state.all('keys'))
    .filter((k) => principal === undefined || k.principal === principal)
    .sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1))
}

export function keyRevoke(state: State, id: string): Promise<KeyRec> {
  return state.tx([`key:${id}`], async (t) => {
    const k = await t.get('keys', id)
    if (!k) throw notFound(`key '${id.slice(0, 64)}' not found`, { key_id: id.slice(0, 64) })
    if (k.revoked_at !== undefined) return k
    const next: KeyRec = { ...k, revoked_at: t.now.toISOString() }
    t.write({ c: 'keys', k: id, v: next })
    return next
  })
}
