import { createHash, createHmac, randomBytes } from 'node:crypto';
import { contextSqlName } from './context-names.js';

/**
 * Signed context values: beside each value the daemon sets its signature, an HMAC-SHA256 of the
 * session's server process id, the name and the value under a key made for the connection. A
 * function a person installs in the database (the engine's `signedContextSql`, `hanactl
 * context-sql`) holds the key where the agent's role cannot read it and returns a value only when
 * its signature verifies, so a policy written on that function sees NULL while a value is forged —
 * also when the statement sets the value back before it ends, which the read-back cannot see.
 * The engine-neutral part lives here; PostgreSQL's settings and function in its folder.
 */

/** The bytes of a connection's signing key. */
export const CONTEXT_KEY_BYTES = 32;

/** A fresh signing key for one connection. */
export function newContextKey(): Buffer {
  return randomBytes(CONTEXT_KEY_BYTES);
}

const KEY_IDS = new WeakMap<Buffer, string>();

/** The key's public id: which row of the key table verifies a signature (several connections may share a database). */
export function contextKeyId(key: Buffer): string {
  let id = KEY_IDS.get(key);
  if (id === undefined) {
    id = createHash('sha256').update('hanactl context key id\0').update(key).digest('hex').slice(0, 16);
    KEY_IDS.set(key, id);
  }
  return id;
}

/**
 * The text a signature covers: `<pid>:<name>=<value>`. The pid is digits and the name is
 * `[a-z0-9_]`, so no two (pid, name, value) give the same text.
 */
function signedText(pid: number, name: string, value: string): string {
  return `${pid}:${contextSqlName(name)}=${value}`;
}

/** `v1.<key id>.<hex HMAC-SHA256>` of one value for one backend. */
export function signContextValue(key: Buffer, pid: number, name: string, value: string): string {
  const mac = createHmac('sha256', key)
    .update(signedText(pid, name, value), 'utf8')
    .digest('hex');
  return `v1.${contextKeyId(key)}.${mac}`;
}

/** What the SQL that installs an engine's verifying function is made for. */
export interface ContextSqlOptions {
  readonly key: Buffer;
  /** The role the connection logs in as: it gets EXECUTE on the function, nothing on the key table. */
  readonly role: string;
  /** The schema that holds the key table and the function (default `hanactl`). */
  readonly schema?: string;
}
