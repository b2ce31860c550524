import t from 'tap'
import fs from 'node:fs'
import path from 'node:path'
import { fixture, sh } from './helpers.ts'

// Overwriting a file through a workspace keeps its mode: an executable stays 100755, a
// symlink stays 120000 (its content is the link target); a new file is 100644.

const fx = await fixture({
  policy: { required_approvals: 0 },
  setup: (src) => {
    fs.mkdirSync(path.join(src, 'bin'))
    fs.writeFileSync(path.join(src, 'bin/run.sh'), '#!/bin/sh\necho run\n', { mode: 0o755 })
    fs.symlinkSync('../README.md', path.join(src, 'bin/readme-link'))
    sh(src, 'add', '.')
    sh(src, 'commit', '-q', '-m', 'executable and symlink')
  },
})
t.teardown(fx.close)
const { api } = fx
const bare = path.join(fx.data, 'repos/demo.git')
const lsMode = (rev: string, p: string): string => sh(bare, 'ls-tree', rev, '--', p).split(' ')[0] ?? ''

t.test('base modes are what git says', async (t) => {
  t.equal(lsMode('main', 'bin/run.sh'), '100755')
  t.equal(lsMode('main', 'bin/readme-link'), '120000')
})

t.test('overwrite keeps 100755 and 120000, new files are 100644, moves keep the mode', async (t) => {
  const ws = (await api('alice', 'POST', '/repos/demo/workspaces', {})).body.id
  const before = await api('alice', 'GET', `/workspaces/${ws}/file?path=bin/run.sh`)
  t.equal(before.body.mode, '100755', 'read through the overlay reports the base mode')
  t.equal(
    (await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'bin/run.sh', content: '#!/bin/sh\necho changed\n' }))
      .status,
    200,
  )
  t.equal(
    (await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'bin/readme-link', content: '../lib/util.ts' }))
      .status,
    200,
  )
  t.equal((await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'bin/new.sh', content: 'new\n' })).status, 200)
  t.equal((await api('alice', 'PUT', `/workspaces/${ws}/files`, { path: 'bin/run2.sh', content: 'x\n' })).status, 200)
  t.equal((await api('alice', 'DELETE', `/workspaces/${ws}/files?path=bin/run2.sh`)).status, 200)
  t.equal(
    (await api('alice', 'POST', `/workspaces/${ws}/moves`, { from: 'bin/run.sh', to: 'tools/run.sh' })).status,
    200,
  )
  const read = await api('alice', 'GET', `/workspaces/${ws}/file?path=tools/run.sh`)
  t.equal(read.body.mode, '100755')
  t.equal((await api('alice', 'GET', `/workspaces/${ws}/file?path=bin/readme-link`)).body.mode, '120000')
  const listing = (await api('alice', 'GET', `/workspaces/${ws}/file?path=bin`)).body.entries
  t.same(
    listing.map((e: { name: string; mode: string }) => `${e.name}:${e.mode}`),
    ['new.sh:100644', 'readme-link:120000'],
  )

  const p = await api('alice', 'POST', `/workspaces/${ws}/proposals`, { title: 'modes' })
  t.equal(p.status, 201)
  t.equal(lsMode(p.body.head, 'tools/run.sh'), '100755')
  t.equal(lsMode(p.body.head, 'bin/readme-link'), '120000')
  t.equal(sh(bare, 'cat-file', '-p', `${p.body.head}:bin/readme-link`), '../lib/util.ts', 'link target replaced')
  t.equal(lsMode(p.body.head, 'bin/new.sh'), '100644')
  t.equal(
    sh(bare, 'ls-tree', '-r', '--name-only', p.body.head, '--', 'bin').trim().split('\n').join(','),
    'bin/new.sh,bin/readme-link',
  )
  t.equal(sh(bare, 'fsck', '--no-progress', '--no-dangling').trim(), '', 'objects written in-process are valid')
  const d = await api('alice', 'GET', `/proposals/${p.body.id}/diff`)
  t.notOk(
    d.body.files.some((f: { status: string }) => f.status === 'type_changed'),
    'no mode change in the diff',
  )
})
