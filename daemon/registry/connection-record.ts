import type { Target } from '../../shared/connection-url.js';

/**
 * A registered connection as the daemon holds it. `password` is defined non-enumerable
 * by the registry, so spreading, logging or serialising a record never carries it.
 */
export interface ConnectionRecord {
  readonly name: string;
  readonly target: Target;
  readonly password?: string;
  readonly description?: string;
  readonly allowWrite: boolean;
  readonly context: readonly string[];
  readonly createdAt: string;
  /** The byte cap of one tool result a person set (`hanactl set --max-result-bytes`); else the default. */
  readonly maxResultBytes?: number;
  /** Context values are signed for the function a person installs (`hanactl set --signed-context`). */
  readonly signedContext?: boolean;
  /** The connection's context signing key, once made; non-enumerable like the password. */
  readonly contextKey?: Buffer;
  /** Its sessions get only its curated tools: run_query is not offered (`hanactl set --curated-only`). */
  readonly curatedOnly?: boolean;
  /** Reads whose plan estimate is above this are refused before they run (`hanactl set --max-cost`). */
  readonly maxCost?: number;
  /** Each write waits for a person's approval (`hanactl set --approve-writes`); only meaningful with allowWrite. */
  readonly approveWrites?: boolean;
  /** How long a write may wait for a decision (`hanactl set --approval-timeout`); else the default. */
  readonly approvalTimeoutSeconds?: number;
  /**
   * For signed-in callers (OAuth), the token claim each context name's value comes from
   * (`hanactl set --context-claim NAME=claim`); such a caller cannot choose it on the URL.
   */
  readonly contextClaims?: Readonly<Record<string, string>>;
}

/** Builds a record whose password and context signing key cannot be enumerated. */
export function makeRecord(
  fields: Omit<ConnectionRecord, 'password' | 'contextKey'>,
  password: string | undefined,
  contextKey?: Buffer,
): ConnectionRecord {
  const record = { ...fields };
  Object.defineProperty(record, 'password', { value: password, enumerable: false });
  Object.defineProperty(record, 'contextKey', { value: contextKey, enumerable: false });
  return record as ConnectionRecord;
}

/**
 * Whether two targets may run as one login of one server: the same engine and user, or a user
 * either leaves unnamed (the engine's default, the system user on PostgreSQL). Host and port are
 * left out, erring on the side of yes: `localhost`, `127.0.0.1`, a name, a socket folder, a
 * MySQL `socket` option (which ignores both) and a pooler on another port can all reach one server.
 */
export function sameLogin(a: Target, b: Target): boolean {
  return a.engine === b.engine && (a.user === undefined || b.user === undefined || a.user === b.user);
}
