/**
 * PostgreSQL functions that run SQL text, change state outside the transaction or read server
 * files, and views that read server files: refused by BOTH checks, each on its own (the token
 * rules, and PostgreSQL's parser), however the name is written (schema-qualified, quoted, in FROM).
 */
import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import {
  PG_DENIED_RELATIONS,
  PG_FUNCTIONS_SERVER_MAJOR,
  PG_REFUSED,
  PG_VOLATILE_READS,
  PG_VOLATILE_UNREVIEWED,
  PG_VOLATILE_WRITES,
} from '../../../../daemon/policy/pg-functions.generated.js';
import { postgresTokenObjection } from '../../../../daemon/policy/pg-functions.js';
import type { Verdict } from '../../../../daemon/policy/types.js';

const read = { dialect: 'postgres', allowWrite: false } as const;
const write = { dialect: 'postgres', allowWrite: true } as const;

/** The parser's check alone, as if the token rules had been fooled into calling `sql` a read. */
const parserAlone = (sql: string, allowWrite = false) =>
  postgresParserObjection(sql, { dialect: 'postgres', allowWrite }, 'read', (inner) => checkStatement(inner, read));
/** The token rules' catalog check alone. */
const tokensAlone = (sql: string, allowWrite = false) => postgresTokenObjection(lex(sql, DIALECTS.postgres.syntax).tokens, allowWrite);

/** Refused by the whole check, by the parser alone, and (unless SQL text is involved) by the token rules alone. */
function refusedByBoth(sql: string, rule: string, options: { allowWrite?: boolean; embedded?: boolean } = {}): void {
  const allowWrite = options.allowWrite ?? false;
  expect(checkStatement(sql, allowWrite ? write : read), sql).toMatchObject({ ok: false, rule });
  expect(parserAlone(sql, allowWrite), `parser: ${sql}`).toMatchObject({ ok: false, rule });
  if (!options.embedded) expect(tokensAlone(sql, allowWrite), `tokens: ${sql}`).toMatchObject({ ok: false, rule });
}

const allowedRead = (sql: string): void => {
  expect(checkStatement(sql, read), sql).toEqual({ ok: true, kind: 'read' } satisfies Verdict);
  expect(parserAlone(sql), `parser: ${sql}`).toBeUndefined();
};

describe('functions that run SQL text (F1, F2)', () => {
  test('ts_rewrite(tsquery, text) runs its text: a context change or a dblink write inside it is refused', () => {
    refusedByBoth(
      "SELECT ts_rewrite('a'::tsquery, 'SELECT set_config(''mcp.customer_id'',''B'',true)::tsquery, ''a''::tsquery')",
      'embedded-sql',
      { embedded: true },
    );
    refusedByBoth(
      "SELECT ts_rewrite('a'::tsquery, $q$SELECT dblink_exec('dbname=x', 'DELETE FROM t')::tsquery, 'a'::tsquery$q$)",
      'embedded-sql',
      { embedded: true },
    );
    refusedByBoth(
      "SELECT * FROM t, pg_catalog.ts_rewrite('a'::tsquery, $q$SELECT pg_stat_reset()::text::tsquery, 'a'$q$)",
      'embedded-sql',
      {
        embedded: true,
      },
    );
  });

  test('ts_rewrite with SQL text built at run time cannot be checked and is refused; a plain query passes', () => {
    refusedByBoth("SELECT ts_rewrite('a'::tsquery, 'SELECT ' || 'q, s FROM aliases')", 'embedded-sql', { embedded: true });
    refusedByBoth("SELECT * FROM ts_stat(query => 'SELECT v FROM docs')", 'embedded-sql', { embedded: true });
    allowedRead("SELECT ts_rewrite('a & b'::tsquery, 'SELECT t, s FROM aliases')");
    // The three-tsquery overload runs no SQL.
    allowedRead("SELECT ts_rewrite('a & b'::tsquery, 'a'::tsquery, 'c'::tsquery)");
    allowedRead("SELECT ts_rewrite('a & b', 'a', 'c')");
  });

  test('crosstab, ts_stat and query_to_xml check each SQL argument; a count argument is not SQL', () => {
    allowedRead("SELECT * FROM crosstab('SELECT r, c, v FROM t ORDER BY 1', 'SELECT DISTINCT c FROM t') AS ct(r text, a int)");
    allowedRead("SELECT * FROM crosstab('SELECT r, c, v FROM t ORDER BY 1', 3) AS ct(r text, a int)");
    refusedByBoth("SELECT * FROM crosstab('SELECT 1', 'SELECT pg_stat_reset()') AS ct(r text)", 'embedded-sql', { embedded: true });
    refusedByBoth("SELECT * FROM crosstab('SELECT 1', cats) AS ct(r text)", 'embedded-sql', { embedded: true });
    refusedByBoth("SELECT * FROM ts_stat('SELECT setseed(0.5)::text::tsvector')", 'embedded-sql', { embedded: true });
  });

  test('functions that paste their arguments into SQL, or reach another connection, are refused outright', () => {
    refusedByBoth("SELECT * FROM connectby('t', 'id', 'parent', '1', 0) AS c(id text, parent text, level int)", 'denied-function');
    refusedByBoth("SELECT * FROM xpath_table('id', 'doc', 'docs', '/a', 'true') AS x(id int, a text)", 'denied-function');
    refusedByBoth("SELECT cursor_to_xml('c', 1, true, false, '')", 'denied-function');
    refusedByBoth("SELECT public.dblink_exec('dbname=x', 'DELETE FROM t')", 'denied-function');
  });

  test('table_to_xml and schema_to_xml may not name what reads server files', () => {
    refusedByBoth("SELECT table_to_xml('pg_file_settings', true, false, '')", 'host-access');
    refusedByBoth("SELECT table_to_xml('pg_catalog.\"pg_hba_file_rules\"', true, false, '')", 'host-access');
    refusedByBoth("SELECT schema_to_xmlschema('pg_catalog', true, false, '')", 'host-access');
    allowedRead("SELECT schema_to_xmlschema('public', true, false, '')");
    refusedByBoth("SELECT table_to_xml(some_column, true, false, '')", 'embedded-sql');
    allowedRead("SELECT table_to_xml('public.orders', true, false, '')");
  });

  test('schema_to_xml and database_to_xml read every relation without naming one', () => {
    for (const sql of [
      "SELECT schema_to_xml('public', true, false, '')",
      "SELECT schema_to_xml_and_xmlschema('public', true, false, '')",
      "SELECT database_to_xml(true, false, '')",
      "SELECT length(database_to_xml_and_xmlschema(true, false, '')::text)",
    ]) {
      refusedByBoth(sql, 'denied-function');
    }
  });

  test("hanactl's own key table is refused wherever it is named", () => {
    refusedByBoth('SELECT * FROM hanactl.context_keys', 'credential-read');
    refusedByBoth('SELECT id FROM "context_keys"', 'credential-read');
  });
});

describe('functions with effects no read-only transaction rolls back (F4, F5)', () => {
  const neverRun = [
    'SELECT pg_stat_reset()',
    "SELECT pg_stat_reset_shared('bgwriter')",
    'SELECT pg_stat_reset_single_table_counters(1)',
    "SELECT * FROM pg_create_physical_replication_slot('s')",
    "SELECT * FROM pg_create_logical_replication_slot('s', 'test_decoding')",
    "SELECT pg_drop_replication_slot('s')",
    "SELECT * FROM pg_replication_slot_advance('s', '0/0')",
    "SELECT * FROM pg_logical_slot_get_changes('s', NULL, NULL)",
    "SELECT * FROM pg_logical_slot_peek_changes('s', NULL, NULL)",
    'SELECT pg_log_backend_memory_contexts(pg_backend_pid())',
    'SELECT pg_advisory_lock(1)',
    'SELECT pg_try_advisory_xact_lock(1)',
    'SELECT pg_cancel_backend(1)',
    'SELECT pg_terminate_backend(1)',
    'SELECT pg_reload_conf()',
    'SELECT pg_rotate_logfile()',
    'SELECT pg_switch_wal()',
    "SELECT pg_read_file('postgresql.conf')",
    "SELECT pg_read_binary_file('PG_VERSION')",
    "SELECT * FROM pg_ls_dir('.')",
    "SELECT pg_stat_file('PG_VERSION')",
    'SELECT pg_current_logfile()',
    "SELECT lo_import('/etc/passwd')",
    "SELECT pg_prewarm('t')",
    'SELECT pg_stat_statements_reset()',
    "SELECT pg_logical_emit_message(false, 'p', 'x')",
    'SELECT setseed(0.5)',
    'SELECT set_limit(0.1)',
    'SELECT pg_export_snapshot()',
    "SELECT heap_force_kill('t', ARRAY['(0,1)'::tid])",
    "SELECT page_header(get_raw_page('t', 0))",
  ];
  test.each(neverRun)('%s is refused on read-only and writable connections, by both checks', (sql) => {
    refusedByBoth(sql, 'denied-function');
    refusedByBoth(sql, 'denied-function', { allowWrite: true });
  });

  test('the name is found however it is written: schema-qualified, quoted, in FROM, nested', () => {
    for (const sql of [
      'SELECT pg_catalog.pg_stat_reset()',
      'SELECT "pg_stat_reset"()',
      'SELECT pg_catalog."pg_stat_reset"()',
      'SELECT * FROM pg_catalog.pg_stat_reset()',
      'SELECT (SELECT x FROM (SELECT PG_STAT_RESET() AS x) s)',
      'SELECT coalesce(NULL, pg_stat_reset())::text',
    ]) {
      refusedByBoth(sql, 'denied-function');
    }
  });

  test('writes that belong to the transaction are refused on read-only connections and allowed on writable ones', () => {
    for (const sql of [
      "SELECT nextval('s')",
      "SELECT setval('s', 1)",
      "SELECT pg_notify('c', 'x')",
      "SELECT gin_clean_pending_list('i')",
      "SELECT brin_summarize_new_values('i')",
      "SELECT pg_import_system_collations('public')",
    ]) {
      refusedByBoth(sql, 'denied-function');
      expect(checkStatement(sql, write), sql).toEqual({ ok: true, kind: 'write' });
      expect(parserAlone(sql, true), sql).toBeUndefined();
    }
  });

  test('volatile functions reviewed as plain reads pass', () => {
    for (const sql of [
      'SELECT random(), clock_timestamp(), gen_random_uuid()',
      "SELECT pg_relation_size('t'), pg_database_size(current_database())",
      "SELECT currval('s')",
      'SELECT * FROM pg_lock_status()',
      'SELECT * FROM t TABLESAMPLE SYSTEM (10)',
      'SELECT * FROM t TABLESAMPLE BERNOULLI (10) REPEATABLE (1)',
    ]) {
      allowedRead(sql);
    }
  });

  test("a maintenance check that holds a lock blocking others' writes is refused on read-only connections only", () => {
    const sql = "SELECT bt_index_parent_check('orders_item')";
    refusedByBoth(sql, 'denied-function');
    expect(checkStatement(sql, read)).toMatchObject({ message: expect.stringContaining("blocking other sessions' writes") });
    expect(checkStatement(sql, write)).toEqual({ ok: true, kind: 'write' });
    allowedRead("SELECT bt_index_check('orders_item')");
  });

  test('a volatile function nobody reviewed is refused on every connection', () => {
    refusedByBoth('SELECT plpgsql_validator(1)', 'denied-function');
    refusedByBoth('SELECT plpgsql_validator(1)', 'denied-function', { allowWrite: true });
  });
});

describe('pg_* functions of a server the classification does not describe', () => {
  test('a pg_* name the classified server lacks is refused on every connection; known ones pass', () => {
    // PostgreSQL 17 server functions, absent from the classified 15: their effects were never classified.
    refusedByBoth('SELECT pg_sync_replication_slots()', 'denied-function');
    refusedByBoth("SELECT * FROM pg_catalog.pg_wal_replay_wait('0/0')", 'denied-function', { allowWrite: true });
    expect(checkStatement('SELECT pg_sync_replication_slots()', read)).toMatchObject({
      message: expect.stringContaining(`not a PostgreSQL ${PG_FUNCTIONS_SERVER_MAJOR} function`),
    });
    allowedRead("SELECT pg_column_size('abc'), pg_typeof(1), pg_backend_pid()");
  });
});

describe('views that read server files (F7)', () => {
  test.each([
    'SELECT * FROM pg_file_settings',
    'SELECT name FROM pg_catalog.pg_hba_file_rules',
    'TABLE pg_ident_file_mappings',
    'SELECT * FROM pg_catalog."pg_config"',
    'SELECT 1 WHERE EXISTS (SELECT 1 FROM pg_file_settings)',
    'SELECT * FROM t JOIN pg_config c ON true',
  ])('%s is refused by both checks', (sql) => {
    refusedByBoth(sql, 'host-access');
    refusedByBoth(sql, 'host-access', { allowWrite: true });
  });
});

describe('the generated classification', () => {
  test('holds every function the findings name, in the class they belong to', () => {
    for (const name of [
      'pg_stat_reset',
      'pg_drop_replication_slot',
      'pg_log_backend_memory_contexts',
      'setseed',
      'connectby',
      'pg_read_file',
    ])
      expect(PG_REFUSED[name], name).toBeDefined();
    for (const name of ['nextval', 'pg_notify', 'gin_clean_pending_list', 'brin_summarize_range'])
      expect(PG_VOLATILE_WRITES).toContain(name);
    expect(PG_VOLATILE_READS).toContain('random');
    expect(Object.keys(PG_DENIED_RELATIONS).sort()).toEqual([
      'pg_config',
      'pg_file_settings',
      'pg_hba_file_rules',
      'pg_ident_file_mappings',
    ]);
  });

  test('every class is disjoint from the others', () => {
    const refused = new Set(Object.keys(PG_REFUSED));
    for (const list of [PG_VOLATILE_READS, PG_VOLATILE_WRITES, PG_VOLATILE_UNREVIEWED])
      for (const name of list) expect(refused.has(name), name).toBe(false);
    const reads = new Set(PG_VOLATILE_READS);
    for (const name of [...PG_VOLATILE_WRITES, ...PG_VOLATILE_UNREVIEWED]) expect(reads.has(name), name).toBe(false);
  });
});
