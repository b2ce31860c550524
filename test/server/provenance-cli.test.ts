import t from 'tap'
import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { spawn, spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { makeSourceRepo, tmpdir } from './helpers.ts'
import type { Json } from '../helpers/json.ts'

// The whole provenance loop through the real ag-server binary: the operator registers the
// author's public key, the key holder signs with a private key read from a file (never a
// flag), the server verifies the record, and only then does policy let the proposal in.

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
const bin = path.join(repoRoot, 'dist/ag-server.mjs')
const root = tmpdir('prov-cli')
t.teardown(() => fs.rmSync(root, { recursive: true, force: true }))

function cli(...args: string[]): { code: number; out: string; err: string } {
  const r = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8' })
  return { code: r.status ?? -1, out: r.stdout, err: r.stderr }
}
function ok(...args: string[]): string {
  const r = cli(...args)
  if (r.code !== 0) throw new Error(`ag-server ${args.join(' ')}: ${r.code} ${r.err}`)
  return r.out
}

const data = path.join(root, 'data')
ok('init', data)
ok('repo', 'add', 'demo', '--from', makeSourceRepo(root, 2), '--data', data)
const tokens: Record<string, string> = {}
for (const [name, principal, scopes, role] of <[string, string, string, string][]>[
  ['alice', 'agent:alice', 'read,workspace,propose', 'contributor'],
  ['rita', 'human:rita', 'read,review', 'reviewer'],
  ['mona', 'human:mona', 'read,integrate', 'maintainer'],
]) {
  const file = path.join(root, `${name}.tok`)
  ok('token', 'mint', '--principal', principal, '--scopes', scopes, '--repos', 'demo', '--out', file, '--data', data)
  ok('role', 'set', '--repo', 'demo', '--principal', principal, '--role', role, '--data', data)
  tokens[name] = fs.readFileSync(file, 'utf8').trim()
}
ok('policy', 'set', '--repo', 'demo', '--require-provenance-for-agents', '--data', data)

// The key holder's pair; the private half stays in a 0600 file.
const { publicKey, privateKey } = crypto.generateKeyPairSync('ed25519')
const pub = path.join(root, 'alice.pub')
const priv = path.join(root, 'alice.pem')
fs.writeFileSync(pub, publicKey.export({ type: 'spki', format: 'pem' }))
fs.writeFileSync(priv, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 })

t.test('key add, list, and the server verifying what provenance sign produced', async (t) => {
  const added = ok('key', 'add', '--principal', 'agent:alice', '--ed25519', pub, '--data', data)
  const keyId = /added key (ed25519-[0-9a-f]{16}) for agent:alice/.exec(added)?.[1]
  t.ok(keyId, added)
  const listed = JSON.parse(ok('key', 'list', '--data', data)) as { keys: { id: string; principal: string }[] }
  t.same(
    listed.keys.map((k) => [k.id, k.principal]),
    [[keyId, 'agent:alice']],
  )
  t.notOk(JSON.stringify(listed).includes('PRIVATE'), 'only public halves')

  const child = spawn(process.execPath, [bin, 'serve', '--data', data, '--listen', '127.0.0.1:0', '--rate', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  t.teardown(() => void child.kill('SIGTERM'))
  const url = await new Promise<string>((resolve, reject) => {
    let out = ''
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString()
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m?.[1]) resolve(m[1])
    })
    child.on('exit', (c) => reject(new Error(`server exited ${c}`)))
  })
  const api = async (who: string, method: string, p: string, body?: unknown): Promise<Json> => {
    const r = await fetch(url + p, {
      method,
      headers: { authorization: `Bearer ${tokens[who]}`, 'content-type': 'application/json' },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    })
    return { status: r.status, body: await r.json() }
  }
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'signed.txt', content: 'signed\n' })
  const p = (await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'signed' })).body
  await api('rita', 'POST', `/proposals/${p.id}/reviews`, { verdict: 'approve' })
  t.equal((await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})).status, 403, 'no provenance yet')

  // A private key others can read is refused, as ssh does.
  const loose = path.join(root, 'loose.pem')
  fs.writeFileSync(loose, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o644 })
  fs.chmodSync(loose, 0o644)
  const refused = cli('provenance', 'sign', p.id, '--key-file', loose, '--data', data)
  t.equal(refused.code, 1)
  t.match(refused.err, /readable by others/)
  t.equal(cli('provenance', 'sign', p.id, '--key', priv, '--data', data).code, 2, 'no other way to pass a key')

  const recFile = path.join(root, 'record.json')
  ok('provenance', 'sign', p.id, '--key-file', priv, '--out', recFile, '--data', data)
  const rec = JSON.parse(fs.readFileSync(recFile, 'utf8')) as { key_id: string; statement: string }
  t.equal(rec.key_id, keyId)
  t.equal(JSON.parse(rec.statement).head, p.head)
  t.notOk(fs.readFileSync(recFile, 'utf8').includes('PRIVATE'), 'the record holds no private key')
  t.match(ok('provenance', 'attach', p.id, '--record', recFile, '--data', data), /verified and attached/)
  const view = (await api('mona', 'GET', `/proposals/${p.id}`)).body
  t.equal(view.provenance.status, 'verified')
  t.equal((await api('mona', 'POST', `/proposals/${p.id}/integrate`, {})).status, 200)

  // Revoked through the running server: a record signed with the key is refused from now on.
  ok('key', 'revoke', keyId as string, '--data', data)
  const ws2 = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  await api('alice', 'PUT', `/workspaces/${ws2}/files`, { path: 'later.txt', content: 'later\n' })
  const q = (await api('alice', 'POST', `/workspaces/${ws2}/proposals`, { title: 'later' })).body
  const late = cli('provenance', 'sign', q.id, '--key-file', priv, '--attach', '--data', data)
  t.equal(late.code, 1)
  t.match(late.err, /revoked_key|not valid at signing/)
  t.equal((await api('mona', 'GET', `/proposals/${q.id}`)).body.provenance.status, 'missing')
})
