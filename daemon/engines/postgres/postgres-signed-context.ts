import { HanactlError } from '../../../shared/errors.js';
import { contextSqlName } from '../context-names.js';
import { CONTEXT_KEY_BYTES, type ContextSqlOptions, contextKeyId } from '../signed-context.js';

/*
 * PostgreSQL's signed context values: beside each value `mcp.<name>` the daemon sets
 * `mcp.<name>.sig` (../signed-context.ts signs it), and the SECURITY DEFINER function
 * `<schema>.context(name)` installed by `postgresContextSql` checks it.
 */

/** The setting the signature of `name` is placed in, beside `mcp.<name>`. */
export function signatureSetting(name: string): string {
  return `mcp.${contextSqlName(name)}.sig`;
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
