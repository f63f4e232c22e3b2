import type { ErrorDetails } from '../../../shared/errors.js';
import type { Param } from '../../../shared/schemas.js';
import type { StatementResult } from '../driver.js';

/**
 * The messages between a `SqliteConnection` (in the daemon) and its `sqlite-host` child,
 * sent over the fork IPC channel with `serialization: 'advanced'`. Every request carries an
 * `id`; the host answers each with exactly one reply of the same `id`, in order, because it
 * handles one message at a time. `open` is always the first request; its reply is the
 * "ready" signal.
 */
export type HostRequest =
  | { readonly id: number; readonly op: 'open'; readonly path: string; readonly readonly: boolean }
  | {
      readonly id: number;
      readonly op: 'execute';
      readonly sql: string;
      readonly params: readonly Param[];
      readonly maxRows: number;
      /** No row is read after those kept reach this many bytes. */
      readonly maxBytes?: number;
      readonly readOnly: boolean;
      /** Context values for `mcp_context(name)`: earlier ones cleared first, always. */
      readonly context: Readonly<Record<string, string>>;
    }
  | { readonly id: number; readonly op: 'ping' }
  | { readonly id: number; readonly op: 'reset' }
  | { readonly id: number; readonly op: 'version' }
  /** Replaces every value `mcp_context(name)` returns: cleared first, then set (names upper-cased). */
  | { readonly id: number; readonly op: 'setContext'; readonly values: Readonly<Record<string, string>> }
  | { readonly id: number; readonly op: 'close' };

export type HostOp = HostRequest['op'];

/** What each operation answers with when it succeeds. */
export interface HostResults {
  open: null;
  execute: StatementResult;
  ping: null;
  reset: null;
  version: string | null;
  setContext: null;
  close: null;
}

/** A `HanactlError` flattened for the wire. */
export interface HostError {
  readonly code: string;
  readonly message: string;
  readonly details: ErrorDetails;
}

/**
 * `retiring` says the host ends after this reply (its connection could not be put back as it was
 * opened, or it was asked to close): the daemon stops using it at once.
 */
export type HostReply = { readonly retiring?: true } & (
  | { readonly id: number; readonly ok: true; readonly value: HostResults[HostOp] }
  | { readonly id: number; readonly ok: false; readonly error: HostError }
);

/** A request without its `id`, as the connection builds it before sending. */
export type HostCall = HostRequest extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
