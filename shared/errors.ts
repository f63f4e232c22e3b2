/**
 * One error type on the wire. Every failure crossing a process boundary carries a stable
 * string `code`, a `category` (agent: the caller can correct it; server: the broker or a
 * database is at fault) and the HTTP status the daemon answers with.
 */
export const ERROR_CODES = {
  INVALID_REQUEST: { status: 400, category: 'agent' },
  INVALID_NAME: { status: 400, category: 'agent' },
  INVALID_URL: { status: 400, category: 'agent' },
  FORBIDDEN: { status: 403, category: 'agent' },
  STATEMENT_REFUSED: { status: 403, category: 'agent' },
  NOT_FOUND: { status: 404, category: 'agent' },
  CONNECTION_NOT_FOUND: { status: 404, category: 'agent' },
  CONNECTION_EXISTS: { status: 409, category: 'agent' },
  PAYLOAD_TOO_LARGE: { status: 413, category: 'agent' },
  QUERY_FAILED: { status: 422, category: 'agent' },
  QUERY_TIMEOUT: { status: 408, category: 'agent' },
  QUERY_CANCELLED: { status: 499, category: 'agent' },
  /** A person denied a write that awaited approval; it did not run. */
  WRITE_DENIED: { status: 403, category: 'agent' },
  /** No person decided on a write within its approval timeout; it did not run. */
  APPROVAL_EXPIRED: { status: 408, category: 'agent' },
  CONTEXT_INVALID: { status: 400, category: 'agent' },
  /** A person (MCP over HTTP) or one MCP session already runs as many calls as its limit allows. */
  TOO_MANY_CALLS: { status: 429, category: 'agent' },
  /** The statement changed a context value; its result was refused. */
  CONTEXT_CHANGED: { status: 403, category: 'agent' },
  CONNECT_FAILED: { status: 502, category: 'server' },
  CONTEXT_UNAVAILABLE: { status: 500, category: 'server' },
  POOL_EXHAUSTED: { status: 503, category: 'server' },
  SHUTTING_DOWN: { status: 503, category: 'server' },
  DRIVER_UNAVAILABLE: { status: 501, category: 'server' },
  REGISTRY_LOCKED: { status: 500, category: 'server' },
  DAEMON_UNAVAILABLE: { status: 503, category: 'server' },
  DAEMON_RESTARTED: { status: 503, category: 'server' },
  /** A person stopped the daemon on purpose; an agent's session does not start it again. */
  DAEMON_STOPPED: { status: 503, category: 'server' },
  INTERNAL: { status: 500, category: 'server' },
} as const satisfies Record<string, { status: number; category: 'agent' | 'server' }>;

export type ErrorCode = keyof typeof ERROR_CODES;
export type ErrorCategory = 'agent' | 'server';

/** Extra, non-secret facts a driver error keeps (SQLSTATE, native code). */
export interface ErrorDetails {
  readonly sqlState?: string;
  readonly nativeCode?: string | number;
  readonly rule?: string;
  readonly hint?: string;
}

/** The error every part of hanactl throws and the wire carries. */
export class HanactlError extends Error {
  readonly code: ErrorCode;
  readonly details: ErrorDetails;

  constructor(code: ErrorCode, message: string, details: ErrorDetails = {}) {
    super(message);
    this.name = 'HanactlError';
    this.code = code;
    this.details = details;
  }

  get status(): number {
    return ERROR_CODES[this.code].status;
  }

  get category(): ErrorCategory {
    return ERROR_CODES[this.code].category;
  }

  /** The wire shape: `{error: {code, category, message, ...details}}`. */
  toJSON(): WireError {
    return { error: { code: this.code, category: this.category, message: this.message, ...this.details } };
  }
}

export interface WireError {
  error: { code: string; category: ErrorCategory; message: string } & ErrorDetails;
}

/** Rebuilds a HanactlError from a wire body; unknown codes become INTERNAL. */
export function fromWire(body: unknown, fallbackStatus = 500): HanactlError {
  const err = (body as Partial<WireError> | null)?.error;
  if (err && typeof err.code === 'string' && typeof err.message === 'string') {
    const code = (err.code in ERROR_CODES ? err.code : 'INTERNAL') as ErrorCode;
    const { code: _c, category: _k, message, ...details } = err;
    return new HanactlError(code, message, details);
  }
  return new HanactlError('INTERNAL', `The daemon answered ${fallbackStatus} without an error body.`);
}

/** True when `value` is a HanactlError (also across module copies). */
export function isHanactlError(value: unknown): value is HanactlError {
  return value instanceof HanactlError || (value instanceof Error && value.name === 'HanactlError' && 'code' in value);
}
