// An HTTP upstream that records every request it receives and answers from a callback: the
// witness for "nothing left the process" and "the token never went there".
import http from 'node:http'
import type { AddressInfo } from 'node:net'

export interface Recorded {
  method: string
  url: string
  headers: http.IncomingHttpHeaders
  body: string
}

export interface RecordingUpstream {
  url: string
  requests: Recorded[]
  close(): Promise<void>
}

export type Answer = (req: Recorded, res: http.ServerResponse) => void

/** By default every request gets an AGWP 404, so callers see a well-formed upstream error. */
export const notFound: Answer = (_req, res) => {
  res.writeHead(404, { 'content-type': 'application/json' })
  res.end(JSON.stringify({ error: { code: 'not_found', message: 'nothing here', details: {} } }))
}

export async function recordingUpstream(answer: Answer = notFound): Promise<RecordingUpstream> {
  const requests: Recorded[] = []
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = []
    req.on('data', (c: Buffer) => chunks.push(c))
    req.on('end', () => {
      const r: Recorded = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }
      requests.push(r)
      answer(r, res)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
}
