// One thought in `.agit/index`, serialized exactly as AGIT does: compact JSON with the fields in
// AGIT's order (role, category, content, timestamp, locations, file_path, line_number), absent
// optional fields omitted, and a location's start_line/end_line omitted when unknown.

export type Role = 'user' | 'ai'
export type Category = 'intent' | 'reasoning' | 'error' | 'note'
export const ROLES: readonly Role[] = ['user', 'ai']
export const CATEGORIES: readonly Category[] = ['intent', 'reasoning', 'error', 'note']

export interface Location {
  file: string
  start_line?: number
  end_line?: number
}

export interface Entry {
  role: string
  category: string
  content: string
  /** Unix seconds. */
  timestamp: number
  locations?: Location[]
  file_path?: string
  line_number?: number
}

export function serializeEntry(e: Entry): string {
  const o: Record<string, unknown> = { role: e.role, category: e.category, content: e.content, timestamp: e.timestamp }
  if (e.locations && e.locations.length > 0)
    o.locations = e.locations.map((l) => ({
      file: l.file,
      ...(l.start_line !== undefined ? { start_line: l.start_line } : {}),
      ...(l.end_line !== undefined ? { end_line: l.end_line } : {}),
    }))
  if (e.file_path !== undefined) o.file_path = e.file_path
  if (e.line_number !== undefined) o.line_number = e.line_number
  return JSON.stringify(o)
}

/** The entry's locations: `locations`, else the legacy `file_path`/`line_number` pair (AGIT's rule). */
export function effectiveLocations(e: Entry): Location[] {
  if (e.locations) return e.locations
  if (e.file_path !== undefined)
    return [{ file: e.file_path, ...(e.line_number !== undefined ? { start_line: e.line_number } : {}) }]
  return []
}

/** Parses one index line by AGIT's rules; a string is the reason it is malformed. */
export function parseEntry(line: string): Entry | string {
  let v: unknown
  try {
    v = JSON.parse(line)
  } catch (e) {
    return (e as Error).message
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return 'not a JSON object'
  const o = v as Record<string, unknown>
  if (typeof o.role !== 'string' || !(ROLES as readonly string[]).includes(o.role))
    return `unknown role ${JSON.stringify(o.role)}`
  if (typeof o.category !== 'string' || !(CATEGORIES as readonly string[]).includes(o.category))
    return `unknown category ${JSON.stringify(o.category)}`
  if (typeof o.content !== 'string') return 'missing field `content`'
  if (typeof o.timestamp !== 'number' || !Number.isInteger(o.timestamp)) return 'missing or non-integer `timestamp`'
  const e: Entry = { role: o.role, category: o.category, content: o.content, timestamp: o.timestamp }
  if (o.locations !== undefined && o.locations !== null) {
    if (!Array.isArray(o.locations)) return '`locations` is not an array'
    const locs: Location[] = []
    for (const l of o.locations as unknown[]) {
      const r = l as Record<string, unknown>
      if (typeof r !== 'object' || r === null || typeof r.file !== 'string') return 'a location has no `file`'
      locs.push({
        file: r.file,
        ...(typeof r.start_line === 'number' ? { start_line: r.start_line } : {}),
        ...(typeof r.end_line === 'number' ? { end_line: r.end_line } : {}),
      })
    }
    e.locations = locs
  }
  if (typeof o.file_path === 'string') e.file_path = o.file_path
  if (typeof o.line_number === 'number') e.line_number = o.line_number
  return e
}

export interface ParsedIndex {
  entries: Entry[]
  /** 1-based line numbers with the reason; the other lines are still read. */
  malformed: Array<{ line: number; reason: string }>
}

/** Reads JSONL text: blank lines skipped; a bad line is reported, never fatal to the others. */
export function parseIndex(text: string): ParsedIndex {
  const entries: Entry[] = []
  const malformed: ParsedIndex['malformed'] = []
  const lines = text.split('\n')
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).replace(/\r$/, '')
    if (line.trim() === '') continue
    const r = parseEntry(line)
    if (typeof r === 'string') malformed.push({ line: i + 1, reason: r })
    else entries.push(r)
  }
  return { entries, malformed }
}
