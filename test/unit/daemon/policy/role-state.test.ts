import { describe, expect, test } from 'vitest';
import { POSTGRES_DIALECT } from '../../../../daemon/engines/postgres/postgres-dialect.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { roleStateTokenLabel } from '../../../../daemon/policy/role-state.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

/** A writable connection whose rows are separated by signed context values (nothing else refuses DDL there). */
const separated: PolicyOptions = { dialect: 'postgres', allowWrite: true, rowSeparation: true };
const plain: PolicyOptions = { dialect: 'postgres', allowWrite: true };

const tokens = (sql: string) => lex(sql, POSTGRES_DIALECT.syntax).tokens;
const parserVerdict = (sql: string, options: PolicyOptions) =>
  postgresParserObjection(sql, options, 'write', (inner) => checkStatement(inner, { ...options, allowWrite: false }));

/**
 * Statements whose effect outlasts the call and changes as whom, or with what settings, later
 * calls run: every gram.y form of a role's or database's defaults, a role's attributes and
 * memberships, and an object's owner. Each is refused by both checks on their own.
 */
const CHANGES = [
  "ALTER ROLE CURRENT_USER SET role = 'support'",
  'ALTER USER CURRENT_USER SET search_path = agentws, public',
  'ALTER ROLE current_user SET row_security = off',
  'ALTER ROLE CURRENT_USER SET standard_conforming_strings = off',
  "ALTER ROLE CURRENT_USER SET default_transaction_isolation = 'serializable'",
  'ALTER ROLE CURRENT_USER SET session_authorization = support',
  'ALTER ROLE CURRENT_USER IN DATABASE test SET role = support',
  'ALTER ROLE ALL SET role = support',
  'ALTER ROLE CURRENT_USER RESET ALL',
  'alter user "me" reset search_path',
  'ALTER ROLE CURRENT_USER SET work_mem FROM CURRENT',
  'ALTER DATABASE test SET role = support',
  'ALTER DATABASE test RESET ALL',
  'ALTER DATABASE test SET search_path TO agentws',
  'ALTER DATABASE test OWNER TO support',
  'ALTER VIEW agentws.lv3 OWNER TO support',
  'ALTER TABLE t OWNER TO support',
  'ALTER TABLE IF EXISTS t ADD COLUMN c int, OWNER TO support',
  'ALTER MATERIALIZED VIEW m OWNER TO support',
  'ALTER SEQUENCE s OWNER TO support',
  'ALTER FOREIGN TABLE f OWNER TO support',
  'ALTER FUNCTION agentws.peek() OWNER TO support',
  'ALTER PROCEDURE p() OWNER TO support',
  'ALTER ROUTINE r OWNER TO support',
  'ALTER SCHEMA agentws OWNER TO support',
  'ALTER TYPE ty OWNER TO support',
  'ALTER DOMAIN d OWNER TO support',
  'ALTER AGGREGATE a(int) OWNER TO support',
  'ALTER LARGE OBJECT 1 OWNER TO support',
  'ALTER COLLATION c OWNER TO support',
  'ALTER TEXT SEARCH CONFIGURATION c OWNER TO support',
  'ALTER EVENT TRIGGER e OWNER TO support',
  'ALTER PUBLICATION p OWNER TO support',
  'ALTER ROLE CURRENT_USER WITH NOINHERIT',
  'ALTER ROLE me RENAME TO other',
  'ALTER GROUP support ADD USER me',
  'CREATE ROLE x IN ROLE support',
  'CREATE USER x',
  'CREATE GROUP g',
  'GRANT support TO CURRENT_USER',
  'GRANT support TO me WITH INHERIT TRUE',
  'REVOKE support FROM me',
  'REVOKE ADMIN OPTION FOR support FROM me',
  'REASSIGN OWNED BY CURRENT_USER TO support',
  'CREATE SCHEMA s2 AUTHORIZATION support',
  'CREATE SCHEMA AUTHORIZATION support CREATE VIEW v AS SELECT * FROM public.ledger',
  'CREATE DATABASE d2 OWNER support',
  'ALTER DEFAULT PRIVILEGES FOR ROLE support IN SCHEMA public GRANT SELECT ON TABLES TO me',
  'ALTER DEFAULT PRIVILEGES FOR USER support GRANT EXECUTE ON FUNCTIONS TO PUBLIC',
];

/** Statements with no such effect: still answered. */
const ORDINARY = [
  'SELECT * FROM orders_s',
  'CREATE VIEW agentws.v AS SELECT 1',
  'ALTER TABLE t ADD COLUMN c int',
  'ALTER TABLE t ALTER COLUMN c SET DEFAULT 1',
  'ALTER VIEW v SET (security_invoker = true)',
  'ALTER DATABASE test RENAME TO t2',
  'ALTER DATABASE test SET TABLESPACE pg_default',
  'ALTER TABLE t RENAME COLUMN owner TO holder',
  'ALTER TABLE t RENAME owner TO holder',
  'GRANT SELECT ON agentws.v TO PUBLIC',
  'REVOKE SELECT ON t FROM PUBLIC',
  'CREATE SCHEMA s3',
  'CREATE SCHEMA s4 AUTHORIZATION CURRENT_USER',
  'CREATE DATABASE d3',
  'ALTER DEFAULT PRIVILEGES IN SCHEMA agentws GRANT SELECT ON TABLES TO PUBLIC',
  'CREATE USER MAPPING FOR CURRENT_USER SERVER s',
  "ALTER USER MAPPING FOR CURRENT_USER SERVER s OPTIONS (SET password 'x')",
];

describe('role state on a writable connection whose rows are separated', () => {
  test.each(CHANGES)('%s is refused by both checks', (sql) => {
    expect(checkStatement(sql, separated)).toMatchObject({ ok: false, rule: 'role-state' });
    expect(roleStateTokenLabel(tokens(sql))).toBeDefined();
    expect(parserVerdict(sql, separated)).toMatchObject({ ok: false, rule: 'role-state' });
  });

  test.each(ORDINARY)('%s is not a role-state change', (sql) => {
    expect(roleStateTokenLabel(tokens(sql))).toBeUndefined();
    expect(parserVerdict(sql, separated)?.rule).not.toBe('role-state');
  });

  test('on a connection without context values they stay writes a person allowed', () => {
    expect(checkStatement("ALTER ROLE CURRENT_USER SET role = 'support'", plain)).toMatchObject({ ok: true, kind: 'write' });
    expect(checkStatement('ALTER VIEW v OWNER TO support', plain)).toMatchObject({ ok: true, kind: 'write' });
  });
});
