// Redaction of what the pack stores and exports. Agentpack's rule (an `api_key|token|secret|
// password` word right before `:` or `=`, plus the values of listed environment variables)
// misses multi-line keys (PEM blocks), provider names such as AWS_SECRET_ACCESS_KEY or
// "client_secret", and bare token shapes. This one also catches those, and takes the core's
// token scrubber (token shapes and the configured credential) as `shapes`, so one definition
// of a token serves both the output pipeline and the pack.
//
// Idempotent (redact(redact(x)) === redact(x)): bundle import relies on it to refuse a bundle
// the destination's redaction would change. Linear time: identifier runs are bounded and
// start only where the previous character cannot belong to them.

export const REDACTED = '[REDACTED]'

/** Environment variables always treated as secrets, beyond the pack's `redactions` list. */
export const PROVIDER_SECRET_NAMES: readonly string[] = [
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'GITHUB_TOKEN',
  'GH_TOKEN',
  'NPM_TOKEN',
  'NODE_AUTH_TOKEN',
  'OPENAI_API_KEY',
  'ANTHROPIC_API_KEY',
  'GOOGLE_API_KEY',
  'GEMINI_API_KEY',
  'AZURE_OPENAI_API_KEY',
  'HF_TOKEN',
  'SLACK_BOT_TOKEN',
  'STRIPE_SECRET_KEY',
  'AG_MCP_TOKEN',
]

// A name segment that marks an environment variable as secret (AWS_SECRET_ACCESS_KEY, DB_PASSWORD).
const SECRET_ENV_NAME = /(?:^|_)(?:KEY|APIKEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|PAT)(?:_|$)/i
const MIN_ENV_SECRET = 8

// `name: value` / `name=value` / `"name": "value"` where the name holds a secret word.
// Both identifier runs are bounded ({0,64}) so a long run costs at most 64×64 steps per start.
const KEY_VALUE =
  /(?<![A-Za-z0-9_.-])(["']?[A-Za-z0-9_.-]{0,64}(?:api[_-]?key|access[_-]?key|private[_-]?key|secret|token|passw(?:or)?d|credential|auth[_-]?key)[A-Za-z0-9_.-]{0,64}["']?[ \t]*[:=][ \t]*)(["']?)([^\s"',;]+)/gi

// scheme://user:password@host
const URL_PASSWORD = /(?<![A-Za-z0-9+.-])([a-z][a-z0-9+.-]{0,30}:\/\/[^\s:@/]{1,256}:)[^\s@/]{1,512}@/gi

const PEM_BEGIN = /-----BEGIN ([A-Z0-9 ]{0,40}PRIVATE KEY[A-Z ]{0,20})-----/g

export interface RedactionConfig {
  /** Names of environment variables whose values are replaced by `[REDACTED:NAME]`. */
  redactions?: readonly string[] | undefined
}

export interface Redactor {
  redact(text: string): string
  redactDeep<T>(value: T): T
}

export interface RedactorOptions {
  config?: RedactionConfig
  env?: NodeJS.ProcessEnv
  /** The core's token scrubber (token shapes, the configured credential). */
  shapes?: ((s: string) => string) | undefined
}

export function createRedactor(o: RedactorOptions = {}): Redactor {
  const values = secretValues(o.env ?? process.env, o.config?.redactions ?? [])
  const redact = (text: string): string => {
    let out = redactPem(String(text ?? ''))
    for (const [name, value] of values) if (out.includes(value)) out = out.split(value).join(`[REDACTED:${name}]`)
    out = out.replace(KEY_VALUE, (_m, head: string, quote: string) => `${head}${quote}${REDACTED}`)
    out = out.replace(URL_PASSWORD, (_m, head: string) => `${head}${REDACTED}@`)
    return o.shapes ? o.shapes(out) : out
  }
  const redactDeep = <T>(value: T): T => deep(value, redact) as T
  return { redact, redactDeep }
}

function secretValues(env: NodeJS.ProcessEnv, configured: readonly string[]): [string, string][] {
  const out = new Map<string, string>()
  for (const name of configured) {
    const v = env[name]
    if (v) out.set(name, v)
  }
  for (const name of PROVIDER_SECRET_NAMES) {
    const v = env[name]
    if (v && v.length >= MIN_ENV_SECRET) out.set(name, v)
  }
  for (const [name, v] of Object.entries(env)) {
    if (v && v.length >= MIN_ENV_SECRET && SECRET_ENV_NAME.test(name)) out.set(name, v)
  }
  // Longest first, so a value containing another is replaced whole.
  return [...out.entries()].sort((a, b) => b[1].length - a[1].length)
}

/** PEM private keys, terminated or not: the body goes, the armour lines stay readable. */
function redactPem(text: string): string {
  if (!text.includes('-----BEGIN ')) return text
  let out = ''
  let from = 0
  PEM_BEGIN.lastIndex = 0
  for (let m = PEM_BEGIN.exec(text); m; m = PEM_BEGIN.exec(text)) {
    const bodyStart = m.index + m[0].length
    const endMarker = `-----END ${m[1]}-----`
    const end = text.indexOf(endMarker, bodyStart)
    out += `${text.slice(from, bodyStart)}${REDACTED}`
    if (end < 0) return out
    out += endMarker
    from = end + endMarker.length
    PEM_BEGIN.lastIndex = from
  }
  return out + text.slice(from)
}

function deep(value: unknown, f: (s: string) => string): unknown {
  if (typeof value === 'string') return f(value)
  if (Array.isArray(value)) return value.map((v) => deep(v, f))
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(value)) out[k] = deep(v, f)
    return out
  }
  return value
}
