import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fixture } from './helpers.ts'
import { adminMint, adminSetRole, repoAdd } from '../../server/src/admin.ts'

// Admin actions are limited to the token's repositories (and to AGWP-Repo) like every
// other action: a repository-limited admin neither sees nor revokes other repositories'
// tokens, nor mints them.

const fx = await fixture()
t.teardown(fx.close)
const { api } = fx
repoAdd(fx.data, 'beta', path.join(fx.root, 'src'))
const state = fx.server.ctx.state
const lim = await adminMint(state, { principal: 'human:lim', scopes: ['read', 'admin'], repos: ['demo'], ttl_s: 3600 })
const betaAgent = await adminMint(state, { principal: 'agent:b', scopes: ['read'], repos: ['beta'], ttl_s: 3600 })
const both = await adminMint(state, { principal: 'agent:both', scopes: ['read'], repos: ['demo', 'beta'], ttl_s: 3600 })
await adminSetRole(state, 'beta', 'agent:b', 'reader')
const root = fs.readFileSync(path.join(fx.data, 'admin.token'), 'utf8').trim()
const ids = (r: { body: { tokens: { id: string; repos: string[] }[] } }): string[] => r.body.tokens.map((x) => x.id)

t.test('a repository-limited admin sees and revokes only its repositories tokens', async (t) => {
  const list = await api(lim.token, 'GET', '/admin/tokens')
  t.equal(list.status, 200)
  t.notOk(ids(list).includes(betaAgent.info['id'] as string), 'a beta-only token is not listed')
  t.notOk(ids(list).includes(both.info['id'] as string), 'a token that also reaches beta is not listed')
  t.ok(
    list.body.tokens.every((x: { repos: string[] }) => x.repos.every((r) => r === 'demo')),
    'only tokens within demo are listed',
  )
  t.ok(ids(list).includes(lim.info['id'] as string))
  const revoke = await api(lim.token, 'DELETE', `/admin/tokens/${betaAgent.info['id']}`)
  t.equal(revoke.status, 404, 'revoking a beta token is answered as if it did not exist')
  t.equal((await api(betaAgent.token, 'GET', '/whoami')).status, 200, 'the beta agent still works')
  t.equal(
    (await api(lim.token, 'POST', '/admin/tokens', { principal: 'agent:x', scopes: ['read'], repos: ['beta'] })).status,
    403,
  )
  t.equal(
    (await api(lim.token, 'POST', '/admin/tokens', { principal: 'agent:x', scopes: ['read'], repos: ['*'] })).status,
    403,
  )
  t.equal(
    (await api(lim.token, 'POST', '/admin/tokens', { principal: 'agent:x', scopes: ['read'], repos: ['demo'] })).status,
    201,
  )
})

t.test('AGWP-Repo limits an all-repositories admin too', async (t) => {
  const all = await api(root, 'GET', '/admin/tokens')
  t.ok(ids(all).includes(betaAgent.info['id'] as string), 'without the header: every token')
  const scoped = await api(root, 'GET', '/admin/tokens', undefined, { 'AGWP-Repo': 'demo' })
  t.notOk(ids(scoped).includes(betaAgent.info['id'] as string))
  t.notOk(
    scoped.body.tokens.some((x: { repos: string[] }) => x.repos.includes('*')),
    'tokens for every repository are out of reach',
  )
  t.equal(
    (await api(root, 'DELETE', `/admin/tokens/${betaAgent.info['id']}`, undefined, { 'AGWP-Repo': 'demo' })).status,
    404,
  )
  t.equal((await api(betaAgent.token, 'GET', '/whoami')).status, 200)
  t.equal((await api(root, 'DELETE', `/admin/tokens/${betaAgent.info['id']}`)).status, 200, 'the unlimited admin can')
  t.equal((await api(betaAgent.token, 'GET', '/whoami')).status, 401)
})
