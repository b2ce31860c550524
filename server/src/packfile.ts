import crypto from 'node:crypto'
import zlib from 'node:zlib'
import { promisify } from 'node:util'

// A git pack (version 2) and its index (version 2), encoded in-process. The server writes
// what one call stores as one pack, not as loose objects: a loose object takes a 4 KiB block
// and a fan-out directory of its own, so a busy repository of 1 MB held several MB of them
// between maintenance runs; a pack is two files, two fsyncs, whatever the object count.
// Objects are stored whole (no deltas): maintenance's repacks find the deltas later.

const deflate = promisify(zlib.deflate)

export type PackType = 'blob' | 'tree' | 'commit'

export interface PackObject {
  oid: string
  type: PackType
  body: Buffer
}

const TYPE_CODE: Record<PackType, number> = { commit: 1, tree: 2, blob: 3 }
/** Bodies larger than this are deflated off the event loop. */
const ASYNC_DEFLATE = 256 * 1024
const LARGE_OFFSET = 0x80000000

/** An entry's header: type and inflated size, 4 bits then 7 bits a byte, low bits first. */
export function entryHeader(type: PackType, size: number): Buffer {
  const out: number[] = []
  let rest = Math.floor(size / 16)
  let byte = (TYPE_CODE[type] << 4) | (size % 16)
  while (rest > 0) {
    out.push(byte | 0x80)
    byte = rest % 128
    rest = Math.floor(rest / 128)
  }
  out.push(byte)
  return Buffer.from(out)
}

const be32 = (n: number): Buffer => {
  const b = Buffer.alloc(4)
  b.writeUInt32BE(n >>> 0)
  return b
}

export interface IndexEntry {
  oid: string
  crc: number
  offset: number
}

/** The .idx of a pack whose trailing checksum is `packSum`: entries in any order. */
export function encodeIndex(entries: IndexEntry[], packSum: Buffer): Buffer {
  const sorted = [...entries].sort((a, b) => (a.oid < b.oid ? -1 : a.oid > b.oid ? 1 : 0))
  const fanout = Buffer.alloc(256 * 4)
  const counts = new Uint32Array(256)
  for (const e of sorted) {
    const b = parseInt(e.oid.slice(0, 2), 16)
    counts[b] = (counts[b] ?? 0) + 1
  }
  let sum = 0
  for (let i = 0; i < 256; i++) {
    sum += counts[i] as number
    fanout.writeUInt32BE(sum, i * 4)
  }
  const offsets = Buffer.alloc(sorted.length * 4)
  const large: Buffer[] = []
  sorted.forEach((e, i) => {
    if (e.offset < LARGE_OFFSET) offsets.writeUInt32BE(e.offset, i * 4)
    else {
      offsets.writeUInt32BE((LARGE_OFFSET | large.length) >>> 0, i * 4)
      const b = Buffer.alloc(8)
      b.writeBigUInt64BE(BigInt(e.offset))
      large.push(b)
    }
  })
  const body = Buffer.concat([
    Buffer.from([0xff, 0x74, 0x4f, 0x63]), // "\377tOc"
    be32(2),
    fanout,
    ...sorted.map((e) => Buffer.from(e.oid, 'hex')),
    ...sorted.map((e) => be32(e.crc)),
    offsets,
    ...large,
    packSum,
  ])
  return Buffer.concat([body, crypto.createHash('sha1').update(body).digest()])
}

export interface EncodedPack {
  pack: Buffer
  idx: Buffer
  /** the pack's trailing SHA-1, hex */
  checksum: string
}

/** One pack holding `objs` (each id once; a repeated one is stored once) and its index. */
export async function encodePack(objs: PackObject[]): Promise<EncodedPack> {
  const seen = new Set<string>()
  const unique = objs.filter((o) => !seen.has(o.oid) && seen.add(o.oid))
  const parts: Buffer[] = [Buffer.from('PACK', 'latin1'), be32(2), be32(unique.length)]
  let offset = 12
  const entries: IndexEntry[] = []
  for (const o of unique) {
    const data = o.body.length > ASYNC_DEFLATE ? await deflate(o.body) : zlib.deflateSync(o.body)
    const head = entryHeader(o.type, o.body.length)
    entries.push({ oid: o.oid, offset, crc: zlib.crc32(data, zlib.crc32(head)) })
    parts.push(head, data)
    offset += head.length + data.length
  }
  const hash = crypto.createHash('sha1')
  for (const p of parts) hash.update(p)
  const sum = hash.digest()
  return { pack: Buffer.concat([...parts, sum]), idx: encodeIndex(entries, sum), checksum: sum.toString('hex') }
}
