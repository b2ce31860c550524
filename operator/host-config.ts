// One server entry added to, or removed from, a host's configuration text, touching nothing else:
// JSON (with comments, as VS Code allows) is edited in place by jsonc-parser; TOML gets a table
// appended or cut out by lines. Either way the result is parsed again and compared with the
// original minus our entry, so an edit that would change anything else is refused, not written.
import { isDeepStrictEqual } from 'node:util'
// The ESM build: the package's main is a UMD file whose require() calls a bundler cannot follow.
import { applyEdits, modify, parse as parseJsonc, printParseErrorCode } from 'jsonc-parser/lib/esm/main.js'
import type { ParseError } from 'jsonc-parser/lib/esm/main.js'
import { parse as parseToml, stringify as stringifyToml } from 'smol-toml'
import type { HostFormat } from './hosts.ts'

export interface ServerEntry {
  command: string
  args: string[]
}

export type Edit = { ok: true; text: string; replaced: boolean } | { ok: false; reason: string }
type Parsed = { ok: true; root: Record<string, unknown> } | { ok: false; reason: string }

function parseText(fmt: HostFormat, text: string): Parsed {
  if (text.trim() === '') return { ok: true, root: {} }
  let root: unknown
  if (fmt.format === 'json') {
    const errors: ParseError[] = []
    root = parseJsonc(text, errors, { allowTrailingComma: true })
    const first = errors[0]
    if (first)
      return {
        ok: false,
        reason: `it is not valid JSON (${printParseErrorCode(first.error)} at offset ${first.offset})`,
      }
  } else {
    try {
      root = parseToml(text)
    } catch (e) {
      return { ok: false, reason: `it is not valid TOML (${(e as Error).message.split('\n')[0]})` }
    }
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root))
    return { ok: false, reason: 'it does not hold one object at the top' }
  return { ok: true, root: root as Record<string, unknown> }
}

/** The servers table of a parsed file, or why it cannot be used. */
function servers(fmt: HostFormat, root: Record<string, unknown>): Record<string, unknown> | string {
  const s = root[fmt.key]
  if (s === undefined) return {}
  if (typeof s !== 'object' || s === null || Array.isArray(s)) return `its "${fmt.key}" is not an object`
  return s as Record<string, unknown>
}

/** The entry named `name` in `text`, if any. */
export function findEntry(fmt: HostFormat, text: string, name: string): unknown {
  const p = parseText(fmt, text)
  if (!p.ok) return undefined
  const s = servers(fmt, p.root)
  return typeof s === 'string' ? undefined : s[name]
}

/** Everything in the file except our entry: what an edit must leave as it was. */
function withoutEntry(fmt: HostFormat, root: Record<string, unknown>, name: string): Record<string, unknown> {
  const s = root[fmt.key]
  if (typeof s !== 'object' || s === null) return root
  const rest = { ...(s as Record<string, unknown>) }
  delete rest[name]
  const out = { ...root, [fmt.key]: rest }
  if (Object.keys(rest).length === 0) delete out[fmt.key]
  return out
}

function entryValue(fmt: HostFormat, entry: ServerEntry): Record<string, unknown> {
  return { ...fmt.extra, command: entry.command, args: entry.args }
}

export function addEntry(fmt: HostFormat, text: string, name: string, entry: ServerEntry, force: boolean): Edit {
  const before = parseText(fmt, text)
  if (!before.ok) return before
  const s = servers(fmt, before.root)
  if (typeof s === 'string') return { ok: false, reason: s }
  const replaced = s[name] !== undefined
  if (replaced && !force)
    return {
      ok: false,
      reason: `it already has a server named "${name}"; pass --force to replace it, or --name to add another`,
    }
  const value = entryValue(fmt, entry)
  let after: string
  if (fmt.format === 'json') {
    const base = text.trim() === '' ? '{}\n' : text
    const edits = modify(base, [fmt.key, name], value, {
      formattingOptions: { insertSpaces: true, tabSize: 2, eol: '\n' },
    })
    after = applyEdits(base, edits)
  } else {
    const base = replaced ? cutTomlTable(text, fmt.key, name) : text
    const sep = base === '' || base.endsWith('\n\n') ? '' : base.endsWith('\n') ? '\n' : '\n\n'
    after = `${base}${sep}[${fmt.key}.${name}]\n${stringifyToml(value)}\n`
  }
  return checked(fmt, before.root, after, name, value, replaced)
}

export function removeEntry(fmt: HostFormat, text: string, name: string): Edit {
  const before = parseText(fmt, text)
  if (!before.ok) return before
  const s = servers(fmt, before.root)
  if (typeof s === 'string') return { ok: false, reason: s }
  if (s[name] === undefined) return { ok: false, reason: `it has no server named "${name}"` }
  const after =
    fmt.format === 'json'
      ? applyEdits(
          text,
          modify(text, [fmt.key, name], undefined, { formattingOptions: { insertSpaces: true, tabSize: 2 } }),
        )
      : cutTomlTable(text, fmt.key, name)
  return checked(fmt, before.root, after, name, undefined, true)
}

/** Plain data (a TOML parser may build prototype-less objects, which deep equality tells apart). */
const plain = (v: unknown): unknown => (v === undefined ? undefined : JSON.parse(JSON.stringify(v)))
const same = (a: unknown, b: unknown): boolean => isDeepStrictEqual(plain(a), plain(b))

/** The edit is written only if it changed our entry and nothing else. */
function checked(
  fmt: HostFormat,
  before: Record<string, unknown>,
  after: string,
  name: string,
  value: Record<string, unknown> | undefined,
  replaced: boolean,
): Edit {
  const p = parseText(fmt, after)
  const s = p.ok ? servers(fmt, p.root) : undefined
  const ok =
    p.ok &&
    typeof s === 'object' &&
    same(s[name], value) &&
    same(withoutEntry(fmt, p.root, name), withoutEntry(fmt, before, name))
  if (!ok)
    return {
      ok: false,
      reason: `the entry "${name}" is written in a form this command cannot edit without touching anything else; edit it by hand`,
    }
  return { ok: true, text: after, replaced }
}

/**
 * Removes every `[<key>.<name>]` and `[<key>.<name>.…]` table by lines: from its header to the next
 * header of another table. An entry written another way (inline, dotted keys) stays, and the
 * check after the edit then refuses it.
 */
function cutTomlTable(text: string, key: string, name: string): string {
  const ours = new RegExp(
    `^\\s*\\[\\s*${key}\\s*\\.\\s*(?:${name}|"${name}"|'${name}')\\s*(?:\\.[^\\]]*)?\\]\\s*(?:#.*)?$`,
  )
  const header = /^\s*\[/
  const out: string[] = []
  let skipping = false
  for (const line of text.split('\n')) {
    if (header.test(line)) skipping = ours.test(line)
    if (!skipping) out.push(line)
  }
  return out.join('\n').replace(/\n{3,}$/, '\n\n')
}
