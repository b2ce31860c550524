// The reading tools, with AGIT's texts: status, file history, relevant context, roadmap,
// recent summaries, context of one git commit.
import { readFile, realpath } from 'node:fs/promises'
import { join } from 'node:path'
import { git } from './git.ts'
import { isInside } from '../../lib/inside-root.ts'
import { ObjectReader, decodeBlob } from './objects.ts'
import type { AgitRepo } from './repo.ts'
import { NOT_INITIALIZED } from './repo.ts'
import type { ThoughtSearch } from './search.ts'
import { truncateChars, utcDateTime } from './text.ts'
import type { ToolText } from './tool-text.ts'

const notInitialized = (): ToolText => ({ text: NOT_INITIALIZED, isError: true, code: 'not_initialized' })

export async function getStatus(repo: AgitRepo, newest = 5): Promise<ToolText> {
  if (!repo.initialized) return notInitialized()
  await repo.ensureSync().catch(() => {})
  await repo.snapBack().catch(() => {})
  const branch = (await repo.head()) ?? 'main'
  const staged = await repo.readStaged()
  const index = await repo.readIndex()
  const lines = [`On branch ${branch}`]
  if (staged) lines.push(`Staged context: ${staged.entries.length} thought(s) ready for commit`)
  lines.push(index.entries.length > 0 ? `Pending thoughts: ${index.entries.length}` : 'No pending thoughts.')
  for (const [file, p] of [
    ['staged-index', staged],
    ['index', index],
  ] as const)
    for (const m of p?.malformed ?? [])
      lines.push(`⚠️ .agit/${file} line ${m.line} is malformed and was skipped: ${m.reason}`)
  const recent = [...(staged?.entries ?? []), ...index.entries].slice(-newest).reverse()
  if (recent.length > 0) {
    lines.push('', 'Newest entries:')
    for (const e of recent) lines.push(`- [${e.role}/${e.category}] ${truncateChars(e.content, 120)}`)
  }
  return { text: lines.join('\n') }
}

export async function getFileHistory(repo: AgitRepo, filepath: string, limit = 3): Promise<ToolText> {
  if (!repo.initialized) return notInitialized()
  await repo.snapBack().catch(() => {})
  // --literal-pathspecs: a path like ":(top)x" or ":!x" is a file name, not pathspec magic.
  const r = await git(repo.root, ['--literal-pathspecs', 'log', '--format=%H', '--', filepath], { okCodes: [128] })
  if (r.code !== 0) {
    if (/does not have any commits yet|unknown revision/.test(r.stderr))
      return { text: `No history found for file: ${filepath}` }
    return { text: `Error: ${r.stderr.trim()}`, isError: true, code: 'failed' }
  }
  const touched = new Set(r.stdout.split('\n').filter(Boolean))
  const found: string[] = []
  for (const c of await repo.history()) {
    if (found.length >= limit) break
    if (touched.has(c.commit.git_hash))
      found.push(`${found.length + 1}. [${c.commit.git_hash.slice(0, 7)}] ${c.commit.summary}`)
  }
  if (found.length === 0) return { text: `No history found for file: ${filepath}` }
  return { text: `File history for '${filepath}':\n\n${found.join('\n')}` }
}

export async function getRelevantContext(
  search: ThoughtSearch,
  repo: AgitRepo,
  query: string,
  limit = 5,
): Promise<ToolText> {
  if (!repo.initialized) return notInitialized()
  const n = Math.min(50, Math.max(1, Math.trunc(limit)))
  let hits: Awaited<ReturnType<ThoughtSearch['search']>>
  try {
    hits = await search.search(query, n)
  } catch (e) {
    return { text: `Search failed: ${(e as Error).message}`, isError: true, code: 'failed' }
  }
  if (hits.length === 0) return { text: 'No relevant context found.' }
  return { text: hits.map((h) => `[${h.category}] (score: ${h.score.toFixed(2)}) ${h.content}`).join('\n\n') }
}

/** AGIT's words when it finds no roadmap (it always says so on a V2 repository). */
export const NO_ROADMAP =
  "No roadmap set yet.\n\nThe roadmap captures high-level project goals and direction.\n\nTo set a roadmap, create an 'agit commit' with context that includes\nyour project goals, or add a ROADMAP.md file to your project."

/** `.agit/roadmap.md`, else `ROADMAP.md`; a file whose real path leaves the repository is not read. */
export async function readRoadmap(repo: AgitRepo): Promise<ToolText> {
  if (!repo.initialized) return notInitialized()
  const root = await realpath(repo.root)
  for (const rel of ['.agit/roadmap.md', 'ROADMAP.md']) {
    const real = await realpath(join(repo.root, rel)).catch(() => undefined)
    if (!real || !isInside(root, real)) continue
    const text = await readFile(real, 'utf8').catch(() => undefined)
    if (text !== undefined) return { text: `# Roadmap (${rel})\n\n${text}` }
  }
  return { text: NO_ROADMAP }
}

export const NO_COMMITS =
  "No commits yet.\n\nRecent summaries will appear here after you make commits with AGIT.\nUse 'agit commit' to create commits that capture your reasoning."

export async function getRecentSummaries(repo: AgitRepo, count = 5): Promise<ToolText> {
  if (!repo.initialized) return notInitialized()
  if (count <= 0) return { text: NO_COMMITS }
  await repo.snapBack().catch(() => {})
  const commits = await repo.history(undefined, Math.min(count, 500)).catch(() => [])
  if (commits.length === 0) return { text: NO_COMMITS }
  const blocks = commits.map(
    (c) =>
      `## [${c.commit.git_hash.slice(0, 7)}] ${utcDateTime(c.commit.created_at).slice(0, 10)}\n${c.commit.summary}`,
  )
  return { text: `# Recent Activity\n\n${blocks.join('\n\n')}` }
}

export async function getContext(repo: AgitRepo, gitHash: string): Promise<ToolText> {
  if (!repo.initialized) return notInitialized()
  for (const c of await repo.history(undefined, 10_000)) {
    const h = c.commit.git_hash
    if (!h.startsWith(gitHash) && !gitHash.startsWith(h)) continue
    const reader = new ObjectReader(repo.root)
    let trace: string | undefined
    try {
      const raw = await reader.read(c.commit.trace_hash)
      trace = raw === null ? undefined : decodeBlob(raw).content
    } catch {
      trace = undefined // AGIT leaves the section out when the trace does not load
    } finally {
      reader.close()
    }
    // AGIT's layout byte for byte: blank lines after the headings, the trace section only when
    // the trace loads, and a final newline after its fence.
    const head = [
      `# Context for git commit ${h}\n\n`,
      `**Neural Commit:** ${c.id}\n`,
      `**Author:** ${c.commit.author}\n`,
      `**Date:** ${utcDateTime(c.commit.created_at)}\n\n`,
      `## Summary\n\n${c.commit.summary}\n\n`,
    ].join('')
    return { text: trace === undefined ? head : `${head}## Trace\n\n\`\`\`\n${trace}\n\`\`\`\n` }
  }
  return {
    text: `No context found for git hash '${gitHash}': Not found in neural commit history`,
    isError: true,
    code: 'not_found',
  }
}
