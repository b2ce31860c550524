import crypto from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'

/** The writes of a spill file, replaceable so tests can make them fail. */
export interface SpillIo {
  /** write len bytes of buf at position `at`; returns the count written (may be short) */
  write(fd: number, buf: Buffer, len: number, at: number): number
}

const fsSpillIo: SpillIo = { write: (fd, buf, len, at) => fs.writeSync(fd, buf, 0, len, at) }

/**
 * A file of records' JSON texts that memory need not hold: the store's current snapshot
 * (written by the store, read through an fd kept open on it) or a spill file. Reads are by
 * position; nothing here parses.
 */
export class ColdFile {
  /** the end of a scratch file's data: where the next spill write goes */
  private bytes = 0

  private constructor(
    private readonly fd: number,
    /** how a scratch file is written; none for a file written elsewhere, which is only read */
    private readonly io: SpillIo | undefined,
  ) {}

  /** Read access to a file written elsewhere (a snapshot), through an fd it now owns. */
  static adopt(fd: number): ColdFile {
    return new ColdFile(fd, undefined)
  }

  /**
   * A scratch file in dir for records nobody has used lately. It is a cache, never the record
   * of state (the snapshot and the journal are), so it is neither fsync'd nor read at start.
   * It is unlinked as soon as it is open: a crash leaves nothing behind, and no other process
   * can reach it. (Where an open file cannot be unlinked, it is removed at close.)
   */
  static scratch(dir: string, io: SpillIo = fsSpillIo): ColdFile {
    const file = path.join(dir, `.spill-${process.pid}-${crypto.randomBytes(6).toString('hex')}`)
    const fd = fs.openSync(file, 'wx+', 0o600)
    const f = new ColdFile(fd, io)
    try {
      fs.unlinkSync(file)
    } catch {
      f.leftAt = file
    }
    return f
  }

  private leftAt: string | undefined

  /** Bytes written to a scratch file since it was made or started over. */
  get size(): number {
    return this.bytes
  }

  /** Append text to a scratch file; undefined (nothing kept) if the write fails, e.g. on a full disk. */
  append(text: string): Cold | undefined {
    const io = this.io
    if (io === undefined) return undefined
    const buf = Buffer.from(text, 'utf8')
    try {
      let off = 0
      while (off < buf.length) {
        const n = io.write(this.fd, buf.subarray(off), buf.length - off, this.bytes + off)
        if (!(n > 0)) return undefined
        off += n
      }
    } catch {
      return undefined
    }
    const c = new Cold(this, this.bytes, buf.length)
    this.bytes += buf.length
    return c
  }

  /** The bytes at [at, at + len). */
  readBytes(at: number, len: number): Buffer {
    const buf = Buffer.allocUnsafe(len)
    let off = 0
    while (off < len) {
      const n = fs.readSync(this.fd, buf, off, len - off, at + off)
      if (n <= 0) throw new Error('a cold record file is shorter than a record it holds')
      off += n
    }
    return buf
  }

  /** Start a scratch file over: every Cold it handed out is void. */
  reset(): void {
    this.bytes = 0
    try {
      fs.ftruncateSync(this.fd)
    } catch {
      // later writes overwrite from the start anyway
    }
  }

  close(): void {
    fs.closeSync(this.fd)
    if (this.leftAt !== undefined) fs.rmSync(this.leftAt, { force: true })
  }
}

/** Where a record's JSON text sits in a ColdFile. */
export class Cold {
  constructor(
    readonly file: ColdFile,
    readonly at: number,
    readonly len: number,
  ) {}

  text(): string {
    return this.bytes().toString('utf8')
  }

  bytes(): Buffer {
    return this.file.readBytes(this.at, this.len)
  }
}
