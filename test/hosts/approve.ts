// What a person approves once before a host uses ag-mcp's entry (docs/hosts.md, "What a person
// approves"): Claude Code uses a server of the project's .mcp.json only in a folder the person
// trusted and once they approved that server (its print mode, `claude -p`, skips both), Codex
// reads the project's .codex/config.toml only in a project the person trusted, and Gemini CLI
// starts no server at all, a user-scope one included, in a folder it does not trust. Each
// function first checks that the host holds the server back (so the approval is needed, as the
// documentation says), then records the approval where the host's own dialog records it, in the
// sandbox's home or repository, never the real user's.
import { appendFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import type { Binaries } from './cache.ts'
import { fail, ok, serverLine, why } from './outcome.ts'
import type { Outcome } from './outcome.ts'
import { run } from './sandbox.ts'
import type { Sandbox } from './sandbox.ts'

type Json = Record<string, unknown>

/** Reads a JSON file (or {}), lets `change` edit it, writes it back. */
function editJson(file: string, change: (j: Json) => void): void {
  const j = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Json) : {}
  change(j)
  mkdirSync(dirname(file), { recursive: true })
  writeFileSync(file, `${JSON.stringify(j, null, 2)}\n`)
}

const asObject = (v: unknown): Json => (typeof v === 'object' && v !== null ? (v as Json) : {})

/**
 * Claude Code, a server in the project's `.mcp.json`: `claude mcp list` shows it "Pending
 * approval" until the person, in an interactive `claude` in the repository, trusts the folder
 * ("Yes, I trust this folder", kept in ~/.claude.json) and approves the server ("Use this MCP
 * server", kept in the project's .claude/settings.local.json). Both are needed.
 */
export function approveClaudeCode(b: Binaries, box: Sandbox, server: string): Outcome {
  const before = run(box.repo, box.env, b.claude, ['mcp', 'list'])
  const line = serverLine(before.stdout, server)
  if (!/Pending approval/.test(line))
    return fail('approve', `claude mcp list before any approval: ${line || why(before)} (not "Pending approval")`)
  editJson(join(box.home, '.claude.json'), (j) => {
    const projects = asObject(j['projects'])
    projects[box.repo] = { ...asObject(projects[box.repo]), hasTrustDialogAccepted: true }
    j['projects'] = projects
  })
  editJson(join(box.repo, '.claude', 'settings.local.json'), (j) => {
    const listed = Array.isArray(j['enabledMcpjsonServers']) ? (j['enabledMcpjsonServers'] as unknown[]) : []
    j['enabledMcpjsonServers'] = [...listed, server]
  })
  return ok(
    'approve',
    `claude mcp list said "${line.replace(/^.* - /, '')}"; approved as its dialogs record it: ~/.claude.json projects[REPO].hasTrustDialogAccepted, REPO/.claude/settings.local.json enabledMcpjsonServers ["${server}"]`,
  )
}

/**
 * Codex reads the project's `.codex/config.toml` only in a trusted project: until then `codex mcp
 * list` does not list its server. The person trusts it when an interactive `codex` in the
 * repository asks "Trust this folder?" ("Trust and continue"), which Codex keeps in its own
 * config.toml as `[projects."<path>"] trust_level = "trusted"`.
 */
export function approveCodex(b: Binaries, box: Sandbox, server: string): Outcome {
  const before = run(box.repo, box.env, b.codex, ['mcp', 'list', '--json'])
  const names = before.code === 0 ? (JSON.parse(before.stdout) as { name: string }[]).map((s) => s.name) : undefined
  if (names === undefined) return fail('approve', `codex mcp list before trust: ${why(before)}`)
  if (names.includes(server))
    return fail('approve', `codex mcp list lists ${server} before the project is trusted: the trust step is not needed`)
  const config = join(box.env['CODEX_HOME'] as string, 'config.toml')
  appendFileSync(config, `\n[projects.${JSON.stringify(box.repo)}]\ntrust_level = "trusted"\n`)
  return ok(
    'approve',
    `codex mcp list listed ${names.length ? names.join(', ') : 'no server'} before trust; trusted as its "Trust this folder?" records it: $CODEX_HOME/config.toml [projects."REPO"] trust_level = "trusted"`,
  )
}

/**
 * Gemini CLI (its folder trust is on by default in this version) shows every server "Disabled" in
 * a folder it does not trust, user-scope ones too, until the person answers its "Do you trust the
 * files in this folder?" with "Trust folder", which it keeps in ~/.gemini/trustedFolders.json.
 */
export function approveGemini(b: Binaries, box: Sandbox, server: string): Outcome {
  const before = run(box.repo, box.env, b.node, [b.gemini, 'mcp', 'list'])
  const line = serverLine(`${before.stdout}\n${before.stderr}`, server)
  if (!/ - Disabled$/.test(line))
    return fail('approve', `gemini mcp list before trust: ${line || why(before)} (not "Disabled")`)
  editJson(join(box.home, '.gemini', 'trustedFolders.json'), (j) => {
    j[box.repo] = 'TRUST_FOLDER'
  })
  return ok(
    'approve',
    `gemini mcp list said "Disabled" (untrusted folder); trusted as its dialog records it: ~/.gemini/trustedFolders.json {"REPO": "TRUST_FOLDER"}`,
  )
}
