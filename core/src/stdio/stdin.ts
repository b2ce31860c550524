// Reading stdin. When it is a pipe or a socket (a host spawned us: the usual case), bytes are
// read into one reused buffer and handed over at once, and pausing stops the read itself.
// Node's stream would allocate a fresh 64 KiB buffer per read, and park one more chunk in the
// paused stream; a parked chunk lives long enough to reach V8's old generation, and its bytes
// stay allocated until a full GC, which a flat heap may not need for a long time. A file or a
// terminal is read through process.stdin.

/** What is read from: pausing stops the read itself. */
export interface Input {
  pause(): void
  resume(): void
  readonly paused: boolean
}

export interface InputHandlers {
  /** Bytes read; valid only during the call (the buffer is reused): copy what you keep. */
  data(bytes: Buffer): void
  /** End of input, or an error reading it. */
  end(): void
}

const READ_BYTES = 64 * 1024

export function readStdin(on: InputHandlers): Input {
  if (isPipeOrSocket()) {
    const net = process.getBuiltinModule('node:net')
    let paused = false
    // `onread` is a documented option of net.Socket that @types/node 20 does not declare.
    const options: import('node:net').SocketConstructorOpts & {
      onread: { buffer: Buffer; callback: (n: number, buf: Buffer) => boolean }
    } = {
      fd: 0,
      readable: true,
      writable: false,
      onread: {
        buffer: Buffer.allocUnsafeSlow(READ_BYTES),
        callback: (n: number, buf: Buffer): boolean => {
          on.data(buf.subarray(0, n))
          return !paused // false stops reading until resume()
        },
      },
    }
    const socket = new net.Socket(options)
    socket.on('end', () => on.end())
    socket.on('error', () => on.end())
    return {
      pause: () => {
        paused = true
      },
      resume: () => {
        if (!paused) return
        paused = false
        socket.resume()
      },
      get paused() {
        return paused
      },
    }
  }
  const stdin = process.stdin
  stdin.on('data', (chunk: Buffer) => on.data(chunk))
  stdin.on('end', () => on.end())
  stdin.on('error', () => on.end())
  return {
    pause: () => void stdin.pause(),
    resume: () => void stdin.resume(),
    get paused() {
      return stdin.isPaused()
    },
  }
}

function isPipeOrSocket(): boolean {
  try {
    const st = process.getBuiltinModule('node:fs').fstatSync(0)
    return st.isFIFO() || st.isSocket()
  } catch {
    return false
  }
}
