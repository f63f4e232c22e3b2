import { createHash, createHmac, randomBytes } from 'node:crypto';
import { HanactlError } from '../../shared/errors.js';
import { contextSqlName } from './context-names.js';

/**
 * Signed context values (PostgreSQL): beside each value `mcp.<name>` the daemon sets
 * `mcp.<name>.sig`, an HMAC-SHA256 of the backend's pid, the name and the value under a key
 * made for the connection. A SECURITY DEFINER function a person installs (`hanactlContextSql`)
 * holds the key in a table the agent's role cannot read and returns a value only when its
 * signature verifies, so a policy written on that function sees NULL while a value is forged —
 * also when the statement sets the value back before it ends, which the read-back cannot see.
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

/** The setting the signature of `name` is placed in, beside `mcp.<name>`. */
export function signatureSetting(name: string): string {
  return `mcp.${contextSqlName(name)}.sig`;
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

/** A PostgreSQL identifier as hanactl accepts one for the schema and the role: plain, unquoted, at most 63 bytes. */
function identifier(what: string, value: string): string {
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(value)) {
    throw new HanactlError(
      'INVALID_REQUEST',
      `The ${what} "${value}" is not a plain PostgreSQL identifier (a letter or _, then letters, digits or _; at most 63).`,
    );
  }
  return value.toLowerCase();
}

export interface ContextSqlOptions {
  readonly key: Buffer;
  /** The role the connection logs in as: it gets EXECUTE on the function, nothing on the key table. */
  readonly role: string;
  /** The schema that holds the key table and the function (default `hanactl`). */
  readonly schema?: string;
}

/**
 * The body of the verifying function `<schema>.context(name)`, as pg_proc.prosrc holds it: the
 * statement check recognises the function by it (postgres-resolve.ts), so that a SECURITY DEFINER
 * function of that name with any other body is not taken for it.
 */
export function contextFunctionBody(schema: string): string {
  return `  SELECT s.v
  FROM (SELECT pg_catalog.lower(name) AS n) AS l,
       LATERAL (SELECT pg_catalog.current_setting('mcp.' || l.n, true) AS v,
                       pg_catalog.current_setting('mcp.' || l.n || '.sig', true) AS sig) AS s,
       ${schema}.context_keys AS k
  WHERE l.n ~ '^[a-z0-9_]+$'
    AND s.v IS NOT NULL AND s.sig IS NOT NULL
    AND k.id = pg_catalog.split_part(s.sig, '.', 2)
    AND pg_catalog.split_part(s.sig, '.', 1) = 'v1'
    AND pg_catalog.split_part(s.sig, '.', 3) = pg_catalog.encode(pg_catalog.sha256(k.outer_pad || pg_catalog.sha256(
          k.inner_pad || pg_catalog.convert_to(pg_catalog.pg_backend_pid()::text || ':' || l.n || '=' || s.v, 'UTF8'))), 'hex')
`;
}

/**
 * The SQL a database owner runs once per database (and again per connection that signs into
 * it): a schema, a key table only its owner can read, this connection's key (as the two padded
 * keys of HMAC, RFC 2104, so that the function needs only the built-in `sha256`, PostgreSQL 11+),
 * the SECURITY DEFINER function `<schema>.context(name)`, and the grants. Idempotent: running it
 * again replaces the function and this key's row.
 */
export function postgresContextSql(options: ContextSqlOptions): string {
  const schema = identifier('schema', options.schema ?? 'hanactl');
  const role = identifier('role', options.role);
  if (options.key.length !== CONTEXT_KEY_BYTES) throw new HanactlError('INTERNAL', 'The context signing key has the wrong length.');
  // HMAC with SHA-256: the key zero-padded to the 64-byte block, XORed with 0x36 (inner) and 0x5c (outer).
  const block = Buffer.alloc(64);
  options.key.copy(block);
  const inner = Buffer.from(block.map((b) => b ^ 0x36)).toString('hex');
  const outer = Buffer.from(block.map((b) => b ^ 0x5c)).toString('hex');
  const id = contextKeyId(options.key);
  return `-- hanactl signed context values: run as the database owner (not as ${role}).
-- This text holds a signing key: do not keep it in a file, a terminal's scrollback or a ticket.
BEGIN;
CREATE SCHEMA IF NOT EXISTS ${schema};
REVOKE ALL ON SCHEMA ${schema} FROM PUBLIC;
CREATE TABLE IF NOT EXISTS ${schema}.context_keys (
  id text PRIMARY KEY,
  inner_pad bytea NOT NULL,
  outer_pad bytea NOT NULL
);
REVOKE ALL ON TABLE ${schema}.context_keys FROM PUBLIC;
INSERT INTO ${schema}.context_keys (id, inner_pad, outer_pad)
  VALUES ('${id}', '\\x${inner}', '\\x${outer}')
  ON CONFLICT (id) DO UPDATE SET inner_pad = EXCLUDED.inner_pad, outer_pad = EXCLUDED.outer_pad;
-- The value of mcp.<name> when mcp.<name>.sig is the daemon's signature of it for this backend; else NULL.
CREATE OR REPLACE FUNCTION ${schema}.context(name text) RETURNS text
  LANGUAGE sql STABLE STRICT SECURITY DEFINER PARALLEL RESTRICTED
  SET search_path = pg_catalog, pg_temp
AS $hanactl$
${contextFunctionBody(schema)}$hanactl$;
REVOKE ALL ON FUNCTION ${schema}.context(text) FROM PUBLIC;
GRANT USAGE ON SCHEMA ${schema} TO ${role};
GRANT EXECUTE ON FUNCTION ${schema}.context(text) TO ${role};
COMMIT;
`;
}
