import t from 'tap'
import crypto from 'node:crypto'
import {
  fixture,
  contractErrors,
  sh,
  registerKey,
  signedRecord,
  keyAdminToken,
  type SigningKey,
  journalStore,
} from './helpers.ts'
import { canonicalStatement } from '../../server/src/provenance.ts'
import path from 'node:path'
import type { Json } from '../helpers/json.ts'

// require_provenance_for_agents means verified provenance: a record counts only when its
// Ed25519 signature checks out with a key of the proposal's author that was valid when it
// was attached, over the canonical statement of the proposal's current head.

const fx = await fixture({ policy: { required_approvals: 1, require_provenance_for_agents: true } })
t.teardown(fx.close)
const { api } = fx
const bare = path.join(fx.data, 'repos/demo.git')
const mainHead = (): string => sh(bare, 'rev-parse', 'refs/heads/main').trim()

const alice = await registerKey(fx, 'agent:alice')
const bob = await registerKey(fx, 'agent:bob')

let n = 0
async function approved(who = 'alice'): Promise<Json> {
  const ws = (await api(who, 'POST', '/repos/demo/workspaces', {})).body.id
  await api(who, 'PUT', `/workspaces/${ws}/files`, { path: `prov/${++n}.txt`, content: `${n}\n` })
  const p = (await api(who, 'POST', `/workspaces/${ws}/proposals`, { title: `change ${n}` })).body
  await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
  return { ...p, _ws: ws }
}

const attach = (id: string, rec: unknown): Promise<Json> => api('admin', 'POST', `/proposals/${id}/provenance`, rec)

t.test('a valid signature by the author key: verified, and integration is allowed', async (t) => {
  const p = await approved()
  const before = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.equal(before.provenance.status, 'missing')
  t.same(
    before.integration_blockers.map((b: { code: string }) => b.code),
    ['provenance_missing'],
  )
  const rec = await signedRecord(fx, p.id, alice)
  t.same(JSON.parse(rec.statement), {
    head: p.head,
    proposal: p.id,
    repository: 'demo',
    target: 'main',
    tree: sh(bare, 'rev-parse', `${p.head}^{tree}`).trim(),
    type: 'agwp-provenance/v1',
  })
  const r = await attach(p.id, rec)
  t.equal(r.status, 200)
  t.equal(contractErrors('Proposal', r.body), '')
  t.match(r.body.provenance, { status: 'verified', key_id: alice.id, head: p.head, required: true })
  t.same(r.body.integration_blockers, [])
  const ok = await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})
  t.equal(ok.status, 200)
  t.equal(mainHead(), ok.body.commit)
})

t.test('every other record is refused with its reason, and integration stays blocked', async (t) => {
  const p = await approved()
  const good = await signedRecord(fx, p.id, alice)
  const revoked = await registerKey(fx, 'agent:alice')
  const signedByRevoked = await signedRecord(fx, p.id, revoked)
  t.equal((await api(await keyAdminToken(fx), 'DELETE', `/admin/keys/${revoked.id}`)).status, 200)
  const statement = JSON.parse(good.statement)
  const signWith = (key: SigningKey, text: string): string =>
    crypto.sign(null, Buffer.from(text, 'utf8'), key.privateKey).toString('base64')
  const otherTarget = canonicalStatement({ ...statement, target: 'release' })
  const cases: [string, unknown, string][] = [
    ["another principal's key", await signedRecord(fx, p.id, bob), 'wrong_principal'],
    ['a revoked key', signedByRevoked, 'revoked_key'],
    ['a tampered statement', { ...good, statement: good.statement.replace(p.head, '0'.repeat(40)) }, 'bad_signature'],
    [
      'a statement for another target',
      { ...good, statement: otherTarget, signature: signWith(alice, otherTarget) },
      'statement_mismatch',
    ],
    ['an unregistered key', { ...good, key_id: 'ed25519-0000000000000000' }, 'unknown_key'],
    ['a garbage signature', { ...good, signature: 'c2lnbmF0dXJl' }, 'bad_signature'],
    [
      'a garbage statement, validly signed',
      { ...good, statement: 'head of pr-1', signature: signWith(alice, 'head of pr-1') },
      'malformed_statement',
    ],
    [
      'a non-canonical statement, validly signed',
      {
        ...good,
        statement: JSON.stringify(statement, null, 1),
        signature: signWith(alice, JSON.stringify(statement, null, 1)),
      },
      'malformed_statement',
    ],
  ]
  for (const [what, rec, reason] of cases) {
    const r = await attach(p.id, rec)
    t.equal(r.status, 422, `${what}: refused`)
    t.equal(r.body.error.details.reason, reason, `${what}: ${reason}`)
    t.match(r.body.error.message, /^provenance refused: /)
  }
  const view = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.equal(view.provenance.status, 'missing', 'nothing was stored')
  const before = mainHead()
  const blocked = await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})
  t.equal(blocked.status, 403)
  t.match(blocked.body.error.message, /verified provenance/)
  t.equal(mainHead(), before)

  // A statement for an older head: the proposal was revised after signing.
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'prov/revised.txt', content: 'r\n' })
  t.equal((await api('alice', 'POST', `/proposals/${p.id}/revisions`, { workspace: ws })).status, 200)
  const old = await attach(p.id, good)
  t.equal(old.status, 422)
  t.equal(old.body.error.details.reason, 'stale_head')
  t.equal((await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})).status, 403)
  // The right record for the new head is accepted.
  await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
  t.equal((await attach(p.id, await signedRecord(fx, p.id, alice))).status, 200)
  t.equal((await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})).status, 200)
})

t.test('a later revision makes a verified record stale', async (t) => {
  const p = await approved()
  t.equal((await attach(p.id, await signedRecord(fx, p.id, alice))).status, 200)
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'prov/stale.txt', content: 's\n' })
  const rev = (await api('alice', 'POST', `/proposals/${p.id}/revisions`, { workspace: ws })).body
  t.equal(rev.provenance.status, 'stale')
  await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
  const r = await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})
  t.equal(r.status, 403)
  t.match(r.body.error.message, /stale/)
})

t.test('a key revoked after the record was attached: the record stays verified', async (t) => {
  const key = await registerKey(fx, 'agent:alice')
  const p = await approved()
  t.equal((await attach(p.id, await signedRecord(fx, p.id, key))).status, 200)
  await api(await keyAdminToken(fx), 'DELETE', `/admin/keys/${key.id}`)
  t.equal((await api('mona', 'GET', `/proposals/${p.id}`)).body.provenance.status, 'verified', 'valid at signing')
})

t.test('a record stored before verification existed is unverified', async (t) => {
  const p = await approved()
  journalStore(fx.server.ctx).commit([
    {
      c: 'proposals',
      k: p.id,
      at: ['provenance'],
      v: {
        key_id: 'k1',
        signature: 'sig',
        statement: `head of ${p.id}`,
        head: p.head,
        attached_by: 'human:root',
        attached_at: new Date().toISOString(),
      },
    },
  ])
  const view = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.equal(contractErrors('Proposal', view), '')
  t.equal(view.provenance.status, 'unverified')
  t.match(view.provenance.reason, /not registered/)
  t.equal((await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})).status, 403)
})

t.test('keys: admin only, one principal per key, listed without secrets', async (t) => {
  t.equal((await api('alice', 'GET', '/admin/keys')).status, 403)
  const scoped = await api('admin', 'POST', '/admin/keys', { principal: 'agent:bob', public_key: alice.publicPem })
  t.equal(scoped.status, 403, 'an admin of some repositories cannot vouch for a principal everywhere')
  const dup = await api(await keyAdminToken(fx), 'POST', '/admin/keys', {
    principal: 'agent:bob',
    public_key: alice.publicPem,
  })
  t.equal(dup.status, 409, 'a key belongs to one principal')
  const rsa = crypto
    .generateKeyPairSync('rsa', { modulusLength: 1024 })
    .publicKey.export({ type: 'spki', format: 'pem' })
  const notEd = await api(await keyAdminToken(fx), 'POST', '/admin/keys', {
    principal: 'agent:bob',
    public_key: rsa.toString(),
  })
  t.equal(notEd.status, 422)
  t.match(notEd.body.error.message, /Ed25519/)
  t.equal(
    (await api(await keyAdminToken(fx), 'POST', '/admin/keys', { principal: 'agent:bob', public_key: 'garbage' }))
      .status,
    422,
  )
  // An OpenSSH public key line is accepted and names the same key as its PEM form.
  const { publicKey } = crypto.generateKeyPairSync('ed25519')
  const raw = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url')
  const blob = Buffer.concat([u32(11), Buffer.from('ssh-ed25519'), u32(32), raw])
  const ssh = await api(await keyAdminToken(fx), 'POST', '/admin/keys', {
    principal: 'agent:bob',
    public_key: `ssh-ed25519 ${blob.toString('base64')} bob@laptop`,
  })
  t.equal(ssh.status, 201)
  t.equal(contractErrors('Key', ssh.body), '')
  t.equal(ssh.body.public_key, raw.toString('base64'))
  const list = await api(await keyAdminToken(fx), 'GET', '/admin/keys?principal=agent:bob')
  t.equal(contractErrors('KeyList', list.body), '')
  t.same(
    list.body.keys.map((k: { id: string }) => k.id),
    [bob.id, ssh.body.id],
  )
})

function u32(n: number): Buffer {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n)
  return b
}
