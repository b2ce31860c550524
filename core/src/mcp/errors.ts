// A protocol-level failure with its JSON-RPC code: thrown by method handlers, answered as `error`.

export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message)
  }
}
