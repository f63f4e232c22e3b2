import { describe, expect, test } from 'vitest';
import { DIALECTS } from '../../../../daemon/engines/index.js';
import { postgresStatisticsRule, postgresTransactionAgeRule } from '../../../../daemon/policy/executor-statistics.js';
import { checkStatement } from '../../../../daemon/policy/index.js';
import { lex } from '../../../../daemon/policy/lexer.js';
import { postgresParserObjection } from '../../../../daemon/policy/parser-rules.js';
import { PG_EXECUTOR_STATISTICS, PG_EXECUTOR_STATISTICS_VIEWS } from '../../../../daemon/policy/pg-functions.generated.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const on = (dialect: PolicyOptions['dialect'], allowWrite = false, database?: string): PolicyOptions => ({
  dialect,
  allowWrite,
  rowSeparation: true,
  ...(database ? { database } : {}),
});

/**
 * On a connection that separates rows by context values, the executor's own counters (tuples and
 * index entries read, blocks hit) count the rows the policy hides: read before and after a
 * `count(*) ... WHERE item = 'x'`, they answer whether a hidden row holds 'x'. Every way of reading
 * them is refused there, by both checks on PostgreSQL and inside SQL text a function runs.
 */
describe('executor statistics on a connection that separates rows', () => {
  test.each([
    "SELECT pg_relation_size('orders_c2')",
    "SELECT pg_total_relation_size('orders'), pg_table_size('orders'), pg_indexes_size('orders')",
    "SELECT relname, pg_size_pretty(pg_relation_size(oid)) FROM pg_class WHERE relkind = 'r'",
  ])("postgres: %s (a part's size is its customer's share) is refused where rows are separated", (sql) => {
    expect(checkStatement(sql, on('postgres'))).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(checkStatement(sql, { dialect: 'postgres', allowWrite: false })).toMatchObject({ ok: true });
  });

  test.each([
    ['postgres', "SELECT pg_stat_get_xact_tuples_returned('orders_item'::regclass)"],
    [
      'postgres',
      "SELECT pg_stat_get_xact_tuples_returned('i'::regclass) AS b, (SELECT count(*) FROM orders WHERE item = 'x') AS v, pg_stat_get_xact_tuples_returned('i'::regclass) AS a",
    ],
    ['postgres', "SELECT pg_catalog.pg_stat_get_xact_blocks_hit('orders'::regclass)"],
    ['postgres', `SELECT "pg_stat_get_numscans"('orders_item'::regclass)`],
    ['postgres', 'SELECT PG_STAT_GET_DB_TUPLES_RETURNED(1)'],
    ['postgres', 'SELECT * FROM pg_stat_xact_user_tables'],
    ['postgres', 'SELECT idx_tup_read FROM pg_catalog.pg_stat_user_indexes'],
    ['postgres', 'SELECT heap_blks_hit FROM pg_statio_user_tables'],
    ['postgres', 'SELECT * FROM "pg_stat_database"'],
    ['postgres', 'TABLE pg_stat_user_tables'],
    ['postgres', 'SELECT * FROM pg_buffercache'],
    ['postgres', "SELECT * FROM pgstattuple('orders')"],
    ['postgres', "SELECT * FROM pgstatindex('orders_item')"],
    ['postgres', "SELECT * FROM pg_visibility_map_summary('orders')"],
    ['postgres', "SELECT count(*) FROM pg_locks WHERE pid = pg_backend_pid() AND mode = 'SIReadLock'"],
    ['postgres', 'SELECT * FROM pg_catalog.pg_lock_status()'],
    ['postgres', 'SELECT pg_blocking_pids(1)'],
    ['postgres', 'SELECT * FROM pg_prepared_xacts'],
    ['postgres', "SELECT bt_index_check('orders_item')"],
    ['postgres', "SELECT query_to_xml('SELECT * FROM pg_stat_xact_user_tables', true, false, '')"],
    ['postgres', "SELECT query_to_xml('SELECT pg_stat_get_xact_tuples_returned(1)', true, false, '')"],
    ['mysql', 'SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS'],
    [
      'mysql',
      "SELECT (SELECT VARIABLE_VALUE FROM information_schema.SESSION_STATUS WHERE VARIABLE_NAME='HANDLER_READ_NEXT') AS n1, (SELECT count(*) FROM v_orders WHERE item = 'm2-3') AS v",
    ],
    ['mysql', 'SELECT * FROM information_schema.global_status'],
    ['mysql', 'SELECT * FROM `information_schema`.`GLOBAL_STATUS`'],
    ['mysql', 'SELECT * FROM information_schema.INDEX_STATISTICS'],
    ['mysql', 'SELECT * FROM information_schema.TABLE_STATISTICS'],
    ['mysql', 'SELECT * FROM information_schema.INNODB_METRICS'],
    ['mysql', 'SELECT * FROM information_schema.INNODB_BUFFER_PAGE'],
    ['mysql', 'SELECT * FROM performance_schema.table_io_waits_summary_by_index_usage'],
    ['mysql', 'SELECT * FROM performance_schema.session_status'],
    ['mysql', 'SELECT * FROM `performance_schema`.status_by_thread'],
    ['mysql', 'SELECT * FROM sys.schema_index_statistics'],
    ['mysql', 'SELECT * FROM sys.`x$schema_table_statistics`'],
    ['mysql', 'SHOW STATUS'],
    ['mysql', "SHOW SESSION STATUS LIKE 'Handler%'"],
    ['mysql', "show global status where variable_name = 'Handler_read_next'"],
    ['mysql', 'SHOW LOCAL STATUS'],
    ['mysql', 'SHOW INDEX_STATISTICS'],
    ['mysql', 'SHOW TABLE_STATISTICS'],
    ['mysql', 'SHOW USER_STATISTICS'],
    ['mysql', 'SHOW CLIENT_STATISTICS'],
    ['mysql', '/*!SHOW STATUS */'],
    ['mysql', "SELECT item FROM v_orders WHERE item >= 'm1-5' ORDER BY item DESC LIMIT ROWS EXAMINED 3"],
    ['mysql', 'SELECT item FROM v_orders LIMIT 1 ROWS EXAMINED 10'],
    ['mysql', 'select item from v_orders limit 0, 1 rows examined 10'],
    ['mysql', 'SELECT (SELECT item FROM v_orders LIMIT ROWS /* x */ EXAMINED 2) AS i'],
  ] as const)('%s: %s is refused', (dialect, sql) => {
    for (const allowWrite of [false, true]) {
      const verdict = checkStatement(sql, on(dialect, allowWrite));
      expect(verdict, sql).toMatchObject({ ok: false });
      // SQL text run by a function is refused by the function's rule, which names the inner one.
      if (!verdict.ok && sql.includes('query_to_xml')) expect(verdict.message).toMatch(/\(executor-statistics\)/);
      else if (!verdict.ok)
        expect(verdict).toMatchObject({
          rule: 'executor-statistics',
          message: expect.stringMatching(/count the rows that context values hide/),
        });
    }
  });

  test.each([
    ['mysql', 'performance_schema', 'SELECT * FROM table_io_waits_summary_by_table'],
    ['mysql', 'sys', 'SELECT * FROM schema_table_statistics'],
    ['mysql', 'information_schema', 'SELECT * FROM SESSION_STATUS'],
  ] as const)('%s on a connection that opens %s: %s (unqualified) is refused', (dialect, database, sql) => {
    expect(checkStatement(sql, on(dialect, false, database))).toMatchObject({ ok: false, rule: 'executor-statistics' });
  });

  test.each([
    ['postgres', 'SELECT relname, relkind FROM pg_class'],
    ['postgres', 'SELECT * FROM orders WHERE status = $1'],
    ['postgres', "SELECT 'pg_stat_user_tables' AS name"],
    ['postgres', 'SELECT pg_stat_clear_snapshot()'],
    ['mysql', 'SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES'],
    ['mysql', 'SHOW FULL TABLES'],
    ['mysql', 'SELECT @@max_connections AS n'],
    ['mysql', 'SELECT status FROM orders'],
    ['mysql', "SELECT 'SESSION_STATUS' AS word"],
    ['mysql', 'SELECT item FROM v_orders LIMIT 5'],
    ['mysql', "SELECT 'rows examined' AS words"],
  ] as const)('%s: %s (no executor counter) still runs', (dialect, sql) => {
    expect(checkStatement(sql, on(dialect))).toMatchObject({ ok: true });
  });

  test.each([
    ['postgres', "SELECT pg_stat_get_xact_tuples_returned('orders_item'::regclass)"],
    ['postgres', 'SELECT * FROM pg_stat_user_tables'],
    ['postgres', 'SELECT * FROM pg_statio_user_indexes'],
    ['mysql', 'SELECT * FROM information_schema.SESSION_STATUS'],
    ['mysql', 'SHOW GLOBAL STATUS'],
    ['mysql', 'SELECT * FROM performance_schema.table_io_waits_summary_by_table'],
  ] as const)('%s without context names: %s still runs (it shows nothing the role cannot read)', (dialect, sql) => {
    expect(checkStatement(sql, { dialect, allowWrite: false })).toMatchObject({ ok: true });
  });

  test('the generated lists hold the counters the oracle uses, and the views over them', () => {
    for (const name of [
      'pg_stat_get_xact_tuples_returned',
      'pg_stat_get_xact_blocks_hit',
      'pg_stat_get_tuples_returned',
      'pg_stat_have_stats',
    ])
      expect(PG_EXECUTOR_STATISTICS).toContain(name);
    for (const name of ['pg_relation_size', 'pg_table_size', 'pg_indexes_size', 'pg_total_relation_size'])
      expect(PG_EXECUTOR_STATISTICS).toContain(name);
    for (const view of ['pg_stat_xact_user_tables', 'pg_stat_user_indexes', 'pg_statio_all_tables', 'pg_stat_database', 'pg_buffercache'])
      expect(Object.keys(PG_EXECUTOR_STATISTICS_VIEWS)).toContain(view);
  });
});

/**
 * Server-wide counters advance with every caller's writes, as a sequence's last value does: read
 * before and after a statement, or between two calls, they tell that a write the caller cannot see
 * happened. Refused where rows are separated, by each check, and kept elsewhere.
 */
describe('server-wide counters where rows are separated', () => {
  test.each([
    'SELECT pg_database_size(current_database())',
    "SELECT pg_size_pretty(pg_catalog.pg_database_size('postgres'))",
    "SELECT pg_tablespace_size('pg_default')",
    'SELECT pg_current_wal_lsn()',
    'SELECT pg_current_wal_insert_lsn(), pg_current_wal_flush_lsn()',
    'SELECT pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn()',
    'SELECT pg_current_snapshot()',
    'SELECT pg_snapshot_xmax(pg_current_snapshot())',
    "SELECT pg_snapshot_xmin('10:20:'::pg_snapshot)",
    'SELECT txid_current_snapshot()',
    'SELECT txid_snapshot_xmax(txid_current_snapshot())',
    'SELECT next_xid, next_oid FROM pg_control_checkpoint()',
    'SELECT * FROM pg_control_system()',
    'SELECT * FROM pg_last_committed_xact()',
    "SELECT pg_xact_commit_timestamp('800'::xid)",
    "SELECT pg_xact_status('800'::xid8), txid_status(800)",
    'SELECT pg_current_xact_id_if_assigned(), txid_current_if_assigned()',
    'SELECT mxid_age(datminmxid) FROM pg_database',
    'SELECT (d).pg_database_size FROM (SELECT datname AS d FROM pg_database) s',
  ])('%s is refused by each check', (sql) => {
    const tokens = lex(sql, DIALECTS.postgres.syntax).tokens;
    expect(checkStatement(sql, on('postgres')), sql).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(postgresStatisticsRule(tokens), `tokens: ${sql}`).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(
      postgresParserObjection(sql, on('postgres'), 'read', (inner) => checkStatement(inner, on('postgres'))),
      `parser: ${sql}`,
    ).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(checkStatement(sql, { dialect: 'postgres', allowWrite: false }), `plain: ${sql}`).toMatchObject({ ok: true });
  });

  test('the refusal says what the counter is', () => {
    const verdict = checkStatement('SELECT pg_current_wal_lsn()', on('postgres'));
    expect(verdict.ok ? '' : verdict.message).toMatch(/pg_current_wal_lsn\(\) reports .*WAL positions/);
  });

  test.each(['SELECT pg_size_pretty(1024::bigint)', "SELECT age(timestamp '2020-01-01')", "SELECT pg_wal_lsn_diff('0/2', '0/1')"])(
    '%s (computed from its arguments) still answers',
    (sql) => {
      expect(checkStatement(sql, on('postgres')), sql).toMatchObject({ ok: true });
    },
  );
});

/**
 * age(xid) is the next transaction id minus its argument: it moves with every session's writing
 * transactions. age(timestamp) shares the name, so age is refused where the statement names a
 * transaction id source (a system column, a catalog's frozen id, a cast to xid).
 */
describe('age() of a transaction id where rows are separated', () => {
  const tokensAlone = (sql: string) => postgresTransactionAgeRule(lex(sql, DIALECTS.postgres.syntax).tokens);
  const parserAlone = (sql: string) =>
    postgresParserObjection(sql, on('postgres'), 'read', (inner) => checkStatement(inner, on('postgres')));

  test.each([
    'SELECT age(datfrozenxid) FROM pg_database',
    'SELECT pg_catalog.age(d.datfrozenxid) FROM pg_catalog.pg_database d',
    "SELECT age('3'::xid)",
    "SELECT age(CAST('3' AS xid))",
    "SELECT age(xid '3')",
    'SELECT age(xmin) FROM orders',
    'SELECT age(x) FROM (SELECT relfrozenxid AS x FROM pg_class) s',
    'SELECT age(xid(pg_snapshot_xmin(s))) FROM (SELECT NULL::pg_snapshot AS s) q',
  ])('%s is refused by each check', (sql) => {
    expect(checkStatement(sql, on('postgres')), sql).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(tokensAlone(sql), `tokens: ${sql}`).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(parserAlone(sql), `parser: ${sql}`).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(checkStatement(sql, { dialect: 'postgres', allowWrite: false }), `plain: ${sql}`).toMatchObject({ ok: true });
  });

  test.each([
    "SELECT age(timestamp '2020-01-01')",
    'SELECT age(now(), created_at) FROM orders',
    'SELECT datname FROM pg_database',
  ])('%s still answers', (sql) => {
    expect(checkStatement(sql, on('postgres')), sql).toMatchObject({ ok: true });
    expect(tokensAlone(sql), sql).toBeUndefined();
    expect(parserAlone(sql), sql).toBeUndefined();
  });
});

describe("PostgreSQL's parser, the second check, on its own", () => {
  const embedded = () => ({ ok: true, kind: 'read' }) as const;
  test.each([
    "SELECT pg_stat_get_xact_tuples_returned('orders_item'::regclass)",
    'SELECT * FROM pg_catalog.pg_stat_xact_user_tables',
    'SELECT * FROM "pg_statio_user_tables"',
    'SELECT n FROM pg_stat_get_numscans(1) AS n',
  ])('%s is refused where rows are separated', (sql) => {
    expect(postgresParserObjection(sql, on('postgres'), 'read', embedded)).toMatchObject({ ok: false, rule: 'executor-statistics' });
    expect(postgresParserObjection(sql, { dialect: 'postgres', allowWrite: false }, 'read', embedded)).toBeUndefined();
  });
});

describe('what a statement names, for the resolve step', () => {
  test('carries that rows are separated only where they are', () => {
    const separated = checkStatement('SELECT * FROM v_io', on('postgres'), true);
    expect(separated).toMatchObject({ ok: true, references: { relations: ['"v_io"'], separated: true } });
    const plain = checkStatement('SELECT * FROM v_io', { dialect: 'postgres', allowWrite: false }, true);
    expect(plain.ok && plain.references?.separated).toBeFalsy();
  });
});
