import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { postgresTokenObjection } from '../../../../daemon/policy/pg-functions.js';

const pgRead = { dialect: 'postgres', allowWrite: false } as const;
const pgWrite = { dialect: 'postgres', allowWrite: true } as const;
const myRead = { dialect: 'mysql', allowWrite: false } as const;
const myWrite = { dialect: 'mysql', allowWrite: true } as const;

/** The token rules alone. */
const tokens = (sql: string) => postgresTokenObjection(lex(sql, DIALECTS.postgres.syntax).tokens, false);
/** PostgreSQL's parser alone, as if the token rules had been fooled into calling `sql` a read. */
const parser = (sql: string) => postgresParserObjection(sql, pgRead, 'read', (inner) => checkStatement(inner, pgRead));

/** The review's inputs (issue 14, G2): a transform of other sessions' statement text undoes result masking. */
const PG_STATEMENT_TEXT = [
  "SELECT encode(convert_to(query,'UTF8'),'hex') FROM pg_stat_activity WHERE query LIKE 'ALTER ROLE%'",
  'SELECT reverse(query) FROM pg_stat_activity',
  "SELECT replace(query,'PASSWORD','PASS_WORD') FROM pg_catalog.pg_stat_activity",
  'SELECT query FROM "pg_stat_activity"',
  'SELECT * FROM pg_stat_get_activity(NULL)',
  'SELECT reverse(pg_stat_get_backend_activity(b)) FROM pg_stat_get_backend_idset() b',
  'SELECT md5(query) FROM pg_stat_statements',
  'SELECT query FROM public.pg_stat_statements(true)',
  'SELECT 1 FROM t WHERE EXISTS (SELECT 1 FROM pg_stat_activity WHERE query LIKE $$%PASSWORD%$$)',
];

/** The review's inputs (G3) and the other views over credential catalogs the generator finds. */
const PG_SECRET_VIEWS = [
  'SELECT * FROM information_schema.user_mapping_options',
  "SELECT replace(array_to_string(umoptions,' '),'password','pw') FROM information_schema._pg_user_mappings",
  'SELECT * FROM pg_user_mappings',
  'SELECT * FROM information_schema."user_mapping_options"',
  'SELECT passwd FROM pg_shadow',
  'SELECT * FROM pg_stats_ext',
];

describe("other sessions' statement text on PostgreSQL (G2)", () => {
  test.each(PG_STATEMENT_TEXT)('the token rules refuse %s', (sql) => {
    expect(tokens(sql)).toMatchObject({ ok: false, rule: 'credential-read' });
  });
  test.each(PG_STATEMENT_TEXT)("PostgreSQL's parser refuses %s", (sql) => {
    expect(parser(sql)).toMatchObject({ ok: false, rule: 'credential-read' });
  });
  test('the message says why and where to look instead, on writable connections too', () => {
    const verdict = checkStatement('SELECT reverse(query) FROM pg_stat_activity', pgWrite);
    expect(verdict).toMatchObject({ ok: false, rule: 'credential-read' });
    if (!verdict.ok) {
      expect(verdict.message).toMatch(/^Refused: pg_stat_activity shows the text of other sessions' statements, which can hold passwords/);
      expect(verdict.message).toMatch(/hanactl queries|DBA tool/);
    }
  });
});

describe('views over credential catalogs on PostgreSQL (G3)', () => {
  test.each(PG_SECRET_VIEWS)('the token rules refuse %s', (sql) => {
    expect(tokens(sql)).toMatchObject({ ok: false, rule: 'credential-read' });
  });
  test.each(PG_SECRET_VIEWS)("PostgreSQL's parser refuses %s", (sql) => {
    expect(parser(sql)).toMatchObject({ ok: false, rule: 'credential-read' });
  });
  test('views that mask the secret or show none still answer', () => {
    for (const sql of [
      'SELECT rolname, rolpassword FROM pg_roles',
      'SELECT usename FROM pg_user',
      'SELECT * FROM information_schema.user_mappings',
      'SELECT pid, state FROM pg_stat_ssl',
      'SELECT * FROM information_schema.foreign_servers',
    ]) {
      expect(checkStatement(sql, pgRead), sql).toMatchObject({ ok: true });
    }
  });
});

describe("other sessions' statement text on MariaDB/MySQL (G2)", () => {
  test.each([
    'SELECT HEX(INFO) FROM information_schema.PROCESSLIST',
    'SELECT REVERSE(INFO) FROM information_schema.PROCESSLIST',
    'SELECT TO_BASE64(INFO) FROM information_schema.`PROCESSLIST`',
    'SHOW PROCESSLIST',
    'SHOW FULL PROCESSLIST',
    'SELECT SQL_TEXT FROM performance_schema.events_statements_current',
    'SELECT HEX(SQL_TEXT) FROM performance_schema.events_statements_history',
    'SELECT * FROM performance_schema.events_statements_history_long',
    'SELECT DIGEST_TEXT FROM performance_schema.events_statements_summary_by_digest',
    'SELECT SQL_TEXT FROM performance_schema.prepared_statements_instances',
    'SELECT PROCESSLIST_INFO FROM performance_schema.threads',
    'SELECT trx_query FROM information_schema.INNODB_TRX',
    'SELECT * FROM sys.processlist',
    'SELECT * FROM sys.`x$processlist`',
    'SELECT current_statement FROM sys.session',
    'SELECT * FROM sys.x$session',
    'SELECT query FROM sys.statement_analysis',
    'SELECT * FROM sys.statements_with_full_table_scans',
    'SELECT * FROM sys.x$statements_with_sorting',
    'SELECT waiting_query FROM sys.innodb_lock_waits',
    'SELECT * FROM sys.schema_table_lock_waits',
  ])('%s is refused on read-only and writable connections', (sql) => {
    for (const options of [myRead, myWrite]) {
      const verdict = checkStatement(sql, options);
      expect(verdict, sql).toMatchObject({ ok: false, rule: 'credential-read' });
      if (!verdict.ok) expect(verdict.message).toMatch(/text of other sessions' statements/);
    }
  });
  test('tables of those schemas without statement text, and a default database of that name, are told apart', () => {
    expect(checkStatement('SELECT * FROM performance_schema.accounts', myRead)).toMatchObject({ ok: true });
    expect(checkStatement('SELECT * FROM sys.host_summary', myRead)).toMatchObject({ ok: true });
    expect(checkStatement('SELECT * FROM threads', myRead)).toMatchObject({ ok: true });
    expect(checkStatement('SELECT * FROM threads', { ...myRead, database: 'performance_schema' })).toMatchObject({
      ok: false,
      rule: 'credential-read',
    });
  });
});
