// release_preflight: Agentpack's read-only release-prep report for the repository at the pack
// root (its package metadata, git sync with upstream, Trusted Publisher workflow, release docs),
// in Agentpack's words, so clients that call it keep working. It writes nothing and starts at
// most one git process (the status every continuity tool already shares).
import { readFile } from 'node:fs/promises'
import { basename, join } from 'node:path'
import { isMissing } from './pack-files.ts'
import type { Pack } from './store.ts'

type Level = 'ok' | 'warn' | 'fail'
interface Check {
  status: Level
  name: string
  detail: string
}

const SEMVER = /^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/

type Json = { ok: true; value: Record<string, unknown> } | { ok: false; error: string }

async function readJson(path: string): Promise<Json> {
  let text: string
  try {
    text = await readFile(path, 'utf8')
  } catch (e) {
    if (isMissing(e)) return { ok: false, error: `${basename(path)} is missing` }
    throw e
  }
  try {
    const value: unknown = JSON.parse(text)
    return { ok: true, value: typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {} }
  } catch (e) {
    return { ok: false, error: `${basename(path)} is not valid JSON: ${(e as Error).message}` }
  }
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined)
const obj = (v: unknown): Record<string, unknown> =>
  typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {}

function packageCheck(pkg: Json): Check {
  if (!pkg.ok) return { status: 'fail', name: 'package.json', detail: pkg.error }
  const name = str(pkg.value['name'])
  const version = str(pkg.value['version'])
  const publish = obj(pkg.value['publishConfig'])
  const issues = [
    name !== 'agentpack-cli' ? `expected name agentpack-cli, found ${name || '(missing)'}` : null,
    !version || !SEMVER.test(version) ? `version is not a plain semver release: ${version || '(missing)'}` : null,
    publish['access'] !== 'public' ? 'publishConfig.access should be public' : null,
    publish['provenance'] !== true ? 'publishConfig.provenance should be true' : null,
  ].filter((x): x is string => x !== null)
  return issues.length
    ? { status: 'fail', name: 'package.json', detail: issues.join('; ') }
    : { status: 'ok', name: 'package.json', detail: `agentpack-cli@${version}` }
}

function lockCheck(pkg: Json, lock: Json): Check {
  const name = 'package-lock.json'
  if (!lock.ok) return { status: 'fail', name, detail: lock.error }
  if (!pkg.ok) return { status: 'warn', name, detail: 'package.json is unreadable; version match not checked' }
  const lockVersion = str(obj(obj(lock.value['packages'])[''])['version']) || str(lock.value['version'])
  const version = str(pkg.value['version'])
  return lockVersion !== version
    ? {
        status: 'fail',
        name,
        detail: `lockfile version ${lockVersion || '(missing)'} does not match package.json ${version || '(missing)'}`,
      }
    : { status: 'ok', name, detail: `version matches ${lockVersion}` }
}

async function gitCheck(pack: Pack): Promise<Check> {
  const fail = (detail: string): Check => ({ status: 'fail', name: 'Git', detail })
  const refs = await pack.git.refs()
  if (!refs.available) return fail('not a git repository')
  const st = await pack.git.status()
  if (st.lines.length) return fail('working tree is not clean; commit or park changes before release prep')
  if (refs.branch !== 'main')
    return {
      status: 'warn',
      name: 'Git',
      detail: `current branch is ${refs.branch}; normal releases are cut from main`,
    }
  if (!st.upstream) return fail('main has no upstream; push main and set upstream before release prep')
  const ahead = st.ahead ?? 0
  const behind = st.behind ?? 0
  if (ahead > 0 && behind > 0)
    return fail(
      `main and ${st.upstream} have diverged (${ahead} ahead, ${behind} behind); reconcile before release prep`,
    )
  if (ahead > 0)
    return fail(`main is ahead of ${st.upstream} by ${ahead} commit(s); push reviewed commits before release prep`)
  if (behind > 0) return fail(`main is behind ${st.upstream} by ${behind} commit(s); update main before release prep`)
  return {
    status: 'ok',
    name: 'Git',
    detail: `main @ ${(await pack.git.short()) ?? 'unknown'}, in sync with ${st.upstream}`,
  }
}

async function workflowCheck(root: string): Promise<Check> {
  const name = 'Publish workflow'
  let text: string
  try {
    text = await readFile(join(root, '.github', 'workflows', 'publish.yml'), 'utf8')
  } catch (e) {
    if (isMissing(e)) return { status: 'fail', name, detail: '.github/workflows/publish.yml is missing' }
    throw e
  }
  const issues = [
    text.includes('id-token: write') ? null : 'missing id-token: write',
    /release:\s*\n\s+types:\s*\[published\]/m.test(text) ? null : 'does not trigger on release: published',
    text.includes('npm publish --access public') ? null : 'does not publish with npm publish --access public',
    /\b(?:NPM_TOKEN|NODE_AUTH_TOKEN)\b/.test(text)
      ? 'must not reference NPM_TOKEN or NODE_AUTH_TOKEN when using Trusted Publisher'
      : null,
  ].filter((x): x is string => x !== null)
  return issues.length
    ? { status: 'fail', name, detail: issues.join('; ') }
    : { status: 'ok', name, detail: 'Trusted Publisher release workflow is present' }
}

async function docsCheck(root: string): Promise<Check> {
  const name = 'Release docs'
  let text: string
  try {
    text = await readFile(join(root, 'docs', 'RELEASING.md'), 'utf8')
  } catch (e) {
    if (isMissing(e)) return { status: 'warn', name, detail: 'docs/RELEASING.md is missing' }
    throw e
  }
  const issues = [
    text.includes('weekly release cadence') ? null : 'weekly release cadence is not documented',
    text.includes('Pre-flight checklist') ? null : 'pre-flight checklist is not documented',
  ].filter((x): x is string => x !== null)
  return issues.length
    ? { status: 'warn', name, detail: issues.join('; ') }
    : { status: 'ok', name, detail: 'weekly cadence and pre-flight checklist are documented' }
}

export async function releasePreflight(pack: Pack): Promise<{ ok: boolean; text: string }> {
  const root = pack.root
  const [pkg, lock] = await Promise.all([
    readJson(join(root, 'package.json')),
    readJson(join(root, 'package-lock.json')),
  ])
  const checks: Check[] = [
    (await pack.initialized())
      ? { status: 'ok', name: 'Pack', detail: `.agentpack found at ${pack.path()}` }
      : { status: 'fail', name: 'Pack', detail: 'No .agentpack directory found. Run `agentpack init`.' },
    packageCheck(pkg),
    lockCheck(pkg, lock),
    await gitCheck(pack),
    await workflowCheck(root),
    await docsCheck(root),
  ]
  const ok = checks.every((c) => c.status !== 'fail')
  const text = [
    'Agentpack release preflight',
    '',
    ...checks.map((c) => `[${c.status}] ${c.name}: ${c.detail}`),
    '',
    'Before npm version:',
    '- npm test',
    '- agentpack doctor',
    '- npm pack --dry-run',
    '- dogfood install/MCP changes in a non-Agentpack repo when relevant',
    '',
    'Release actions are intentionally manual:',
    '- npm version patch --no-git-tag-version',
    '- commit package.json and package-lock.json as a release-prep commit',
    '- push main, tag v<version>, then publish the GitHub Release',
    '',
    ok ? 'Result: ready for release-prep checks.' : 'Result: fix failed checks before release prep.',
  ].join('\n')
  return { ok, text }
}
