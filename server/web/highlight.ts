// A small syntax highlighter of our own: per language one regular expression of comments,
// strings, numbers, words and a few language-specific forms, run line by line, with the state a
// line ends in (inside a block comment or a multi-line string) carried to the next. It only
// classifies text into tokens; the page turns them into spans with textContent.

export type TokenClass = '' | 'com' | 'str' | 'num' | 'kw' | 'lit' | 'ty' | 'tag' | 'attr'
export type Token = readonly [TokenClass, string]
/** Where a line ended: inside a construct waiting for `close`, or nowhere ('' ). */
export interface State {
  close: string
  cls: TokenClass
}
export const START: State = { close: '', cls: '' }

interface Spec {
  line?: readonly string[]
  block?: readonly (readonly [string, string])[]
  /** Delimiters; those in `multi` may span lines. */
  strings?: readonly string[]
  multi?: readonly string[]
  keywords?: string
  lits?: string
  /** Language-specific forms, tried first: [regex source, class]. */
  extra?: readonly (readonly [string, TokenClass])[]
  words?: boolean
  caseless?: boolean
}

const C_LIKE =
  'break case catch class const continue default do else enum export extends finally for if import new return static switch this throw try while'
const SPECS: Record<string, Spec> = {
  js: {
    line: ['//'],
    block: [['/*', '*/']],
    strings: ['"', "'"],
    multi: ['`'],
    keywords: `${C_LIKE} async await debugger delete function in instanceof let of super typeof var void with yield get set type interface implements private protected public readonly declare namespace abstract as from keyof satisfies`,
    lits: 'true false null undefined NaN Infinity',
  },
  py: {
    line: ['#'],
    strings: ['"', "'"],
    multi: ['"""', "'''"],
    keywords:
      'and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield match case',
    lits: 'True False None self',
  },
  go: {
    line: ['//'],
    block: [['/*', '*/']],
    strings: ['"', "'"],
    multi: ['`'],
    keywords:
      'break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var',
    lits: 'true false nil iota',
  },
  rs: {
    line: ['//'],
    block: [['/*', '*/']],
    strings: ['"'],
    keywords:
      'as async await break const continue crate dyn else enum extern fn for if impl in let loop match mod move mut pub ref return static struct super trait type unsafe use where while',
    lits: 'true false self Self None Some Ok Err',
  },
  c: {
    line: ['//'],
    block: [['/*', '*/']],
    strings: ['"', "'"],
    extra: [['#\\s*[a-z]+', 'kw']],
    keywords: `${C_LIKE} auto char double extern float goto inline int long namespace private protected public register short signed sizeof struct template typedef typename union unsigned using virtual void volatile final implements package interface fun val var override`,
    lits: 'true false null nullptr NULL',
  },
  sh: {
    line: ['#'],
    strings: ['"', "'"],
    extra: [['\\$\\{?[A-Za-z_][A-Za-z0-9_]*\\}?', 'attr']],
    keywords:
      'if then else elif fi case esac for while until do done in function return local export readonly set unset shift exit',
  },
  sql: {
    line: ['--'],
    block: [['/*', '*/']],
    strings: ["'"],
    keywords:
      'select from where insert into update delete create table alter drop join left right inner outer on group by order having limit values and or not as distinct union index primary key references default',
    lits: 'null true false',
    caseless: true,
  },
  json: { strings: ['"'], extra: [['"(?:[^"\\\\]|\\\\.)*"(?=\\s*:)', 'attr']], lits: 'true false null' },
  yaml: {
    line: ['#'],
    strings: ['"', "'"],
    extra: [['^\\s*-?\\s*[A-Za-z0-9_.\\-]+(?=\\s*:)', 'attr']],
    lits: 'true false null yes no',
  },
  toml: {
    line: ['#', ';'],
    strings: ['"', "'"],
    extra: [
      ['^\\s*\\[[^\\]]*\\]', 'kw'],
      ['^\\s*[A-Za-z0-9_.\\-]+(?=\\s*=)', 'attr'],
    ],
    lits: 'true false',
  },
  css: {
    block: [['/*', '*/']],
    strings: ['"', "'"],
    extra: [
      ['@[a-z-]+', 'kw'],
      ['#[0-9a-fA-F]{3,8}\\b', 'num'],
      ['[a-z-]+(?=\\s*:[^:])', 'attr'],
    ],
    words: false,
  },
  html: {
    block: [['<!--', '-->']],
    strings: ['"', "'"],
    extra: [
      ['</?[A-Za-z][\\w:.-]*|/?>', 'tag'],
      ['[A-Za-z_:@][\\w:.-]*(?==)', 'attr'],
      ['&[#\\w]+;', 'lit'],
    ],
    words: false,
  },
  md: {
    extra: [
      ['^#{1,6}\\s.*', 'kw'],
      ['`[^`]*`', 'str'],
      ['^\\s*(?:[-*+]|\\d+\\.)\\s', 'lit'],
      ['\\[[^\\]]*\\]\\([^)]*\\)', 'attr'],
    ],
    words: false,
  },
  docker: {
    line: ['#'],
    strings: ['"', "'"],
    keywords:
      'FROM RUN CMD LABEL EXPOSE ENV ADD COPY ENTRYPOINT VOLUME USER WORKDIR ARG ONBUILD STOPSIGNAL HEALTHCHECK SHELL AS',
  },
}

const BY_EXT: Record<string, string> = {
  js: 'js',
  mjs: 'js',
  cjs: 'js',
  jsx: 'js',
  ts: 'js',
  tsx: 'js',
  mts: 'js',
  cts: 'js',
  py: 'py',
  pyi: 'py',
  go: 'go',
  rs: 'rs',
  c: 'c',
  h: 'c',
  cc: 'c',
  cpp: 'c',
  cxx: 'c',
  hpp: 'c',
  java: 'c',
  cs: 'c',
  kt: 'c',
  kts: 'c',
  swift: 'c',
  scala: 'c',
  php: 'c',
  dart: 'c',
  sh: 'sh',
  bash: 'sh',
  zsh: 'sh',
  sql: 'sql',
  json: 'json',
  jsonc: 'json',
  yaml: 'yaml',
  yml: 'yaml',
  toml: 'toml',
  ini: 'toml',
  cfg: 'toml',
  css: 'css',
  scss: 'css',
  less: 'css',
  html: 'html',
  htm: 'html',
  xml: 'html',
  svg: 'html',
  vue: 'html',
  md: 'md',
  markdown: 'md',
}

/** The language of a path, or undefined (shown plain). */
export function languageOf(path: string): string | undefined {
  const base = path.slice(path.lastIndexOf('/') + 1)
  if (/^Dockerfile/i.test(base)) return 'docker'
  if (/^(Makefile|GNUmakefile)$/.test(base)) return 'sh'
  const dot = base.lastIndexOf('.')
  return dot > 0 ? BY_EXT[base.slice(dot + 1).toLowerCase()] : undefined
}

type Kind = 'extra' | 'line' | 'block' | 'string' | 'num' | 'word'
interface Compiled {
  re: RegExp
  kinds: { kind: Kind; cls: TokenClass; close?: string }[]
  keywords: Set<string>
  lits: Set<string>
  caseless: boolean
  multi: Set<string>
}

const esc = (s: string): string => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
const compiled = new Map<string, Compiled>()

function compile(lang: string): Compiled {
  const cached = compiled.get(lang)
  if (cached) return cached
  const s = SPECS[lang] as Spec
  const alts: string[] = []
  const kinds: Compiled['kinds'] = []
  for (const [re, cls] of s.extra ?? []) {
    alts.push(re)
    kinds.push({ kind: 'extra', cls })
  }
  for (const l of s.line ?? []) {
    alts.push(`${esc(l)}.*`)
    kinds.push({ kind: 'line', cls: 'com' })
  }
  for (const [open, close] of s.block ?? []) {
    alts.push(esc(open))
    kinds.push({ kind: 'block', cls: 'com', close })
  }
  // Longest delimiters first: `"""` before `"`.
  for (const d of [...(s.multi ?? []), ...(s.strings ?? [])].sort((a, b) => b.length - a.length)) {
    alts.push(esc(d))
    kinds.push({ kind: 'string', cls: 'str', close: d })
  }
  alts.push('\\b(?:0[xXbBoO][\\da-fA-F_]+|\\d[\\d_]*(?:\\.\\d[\\d_]*)?(?:[eE][+-]?\\d+)?)\\b')
  kinds.push({ kind: 'num', cls: 'num' })
  if (s.words !== false) {
    alts.push('[A-Za-z_$][\\w$]*')
    kinds.push({ kind: 'word', cls: '' })
  }
  const split = (w: string | undefined): Set<string> => new Set((w ?? '').split(' ').filter(Boolean))
  const c: Compiled = {
    re: new RegExp(alts.map((a) => `(${a})`).join('|'), 'g'),
    kinds,
    keywords: split(s.keywords),
    lits: split(s.lits),
    caseless: s.caseless === true,
    multi: new Set(s.multi ?? []),
  }
  compiled.set(lang, c)
  return c
}

/** The end of a construct opened before `from`: the index after `close`, or -1 (it goes on). */
function closeAt(line: string, from: number, close: string, escapes: boolean): number {
  for (let i = from; i < line.length; i++) {
    if (escapes && line.charCodeAt(i) === 92) {
      i++
      continue
    }
    if (line.startsWith(close, i)) return i + close.length
  }
  return -1
}

/** One line's tokens, and the state the next line starts in. */
export function tokenize(line: string, lang: string | undefined, state: State): { tokens: Token[]; state: State } {
  if (lang === undefined || SPECS[lang] === undefined) return { tokens: [['', line]], state: START }
  const c = compile(lang)
  const tokens: Token[] = []
  let pos = 0
  if (state.close !== '') {
    const end = closeAt(line, 0, state.close, state.cls === 'str')
    if (end < 0) return { tokens: [[state.cls, line]], state }
    tokens.push([state.cls, line.slice(0, end)])
    pos = end
  }
  const re = c.re
  re.lastIndex = pos
  let plain = pos
  for (let m = re.exec(line); m !== null; m = re.exec(line)) {
    const g = m.findIndex((x, i) => i > 0 && x !== undefined) - 1
    const k = c.kinds[g]
    if (k === undefined || m[0] === '') {
      re.lastIndex = m.index + 1
      continue
    }
    if (m.index > plain) tokens.push(['', line.slice(plain, m.index)])
    let end = m.index + m[0].length
    let cls: TokenClass = k.cls
    if (k.kind === 'block' || k.kind === 'string') {
      const close = k.close as string
      const to = closeAt(line, end, close, k.kind === 'string')
      if (to < 0) {
        tokens.push([cls, line.slice(m.index)])
        // A single-line string left open ends with its line.
        return { tokens, state: k.kind === 'block' || c.multi.has(close) ? { close, cls } : START }
      }
      end = to
    } else if (k.kind === 'word') {
      const w = c.caseless ? m[0].toLowerCase() : m[0]
      cls = c.keywords.has(w) ? 'kw' : c.lits.has(w) ? 'lit' : /^[A-Z][a-z]/.test(m[0]) ? 'ty' : ''
    }
    tokens.push([cls, line.slice(m.index, end)])
    plain = end
    re.lastIndex = end
  }
  if (plain < line.length) tokens.push(['', line.slice(plain)])
  return { tokens, state: START }
}
