// A database URL as it may be shown: in a message, a log line, a command to run. The password
// never leaves the process.

/** `url` without its password (the user stays); an unparsable URL with an @ is named by its scheme only. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url)
    u.password = ''
    return u.href
  } catch {
    // a password could only sit before an @: show nothing of such a string but its scheme
    return url.includes('@') ? `${url.split(':')[0] ?? 'postgres'}://…` : url
  }
}

/** `host:port` of the database a URL names (PostgreSQL's default port when absent). */
export function databaseHost(url: string): string {
  try {
    const u = new URL(url)
    return `${u.hostname || 'localhost'}:${u.port || '5432'}`
  } catch {
    return 'an unparsable URL'
  }
}
