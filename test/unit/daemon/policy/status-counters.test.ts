import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const plain: PolicyOptions = { dialect: 'mysql', allowWrite: false };
const separated: PolicyOptions = { dialect: 'mysql', allowWrite: false, rowSeparation: true };

/**
 * The MySQL/MariaDB counter tables refused wherever their name appears on a connection that
 * separates rows, written out here as a fixed list: the rule may take its names from anywhere,
 * but none of these may stop being refused. Reading them counts the rows a view's filter removes.
 */
const COUNTER_TABLES = (
  'session_status global_status client_statistics user_statistics index_statistics table_statistics ' +
  'innodb_metrics innodb_buffer_page innodb_buffer_page_lru innodb_buffer_pool_stats innodb_cmp innodb_cmp_reset ' +
  'innodb_cmpmem innodb_cmpmem_reset innodb_cmp_per_index innodb_cmp_per_index_reset key_caches optimizer_trace ' +
  'thread_pool_groups thread_pool_queues thread_pool_stats thread_pool_waits query_response_time'
).split(' ');

/** The MariaDB SHOW forms that print the same counters. */
const SHOW_COUNTERS = (
  'SHOW STATUS|SHOW GLOBAL STATUS|SHOW SESSION STATUS|SHOW LOCAL STATUS|SHOW CLIENT_STATISTICS|SHOW USER_STATISTICS|' +
  'SHOW INDEX_STATISTICS|SHOW TABLE_STATISTICS|SHOW QUERY_RESPONSE_TIME|SHOW WSREP_STATUS'
).split('|');

/** Every place a name can stand: a column, a user table, any schema, any quoting or case. */
const forms = (name: string): string[] => [
  `SELECT ${name} FROM orders`,
  `SELECT * FROM ${name}`,
  `SELECT * FROM \`${name.toUpperCase()}\``,
  `SELECT * FROM shop.${name}`,
  `SELECT * FROM information_schema.${name.toUpperCase()}`,
  `SELECT * FROM \`information_schema\`.\`${name}\``,
  `SELECT count(*) FROM orders WHERE id IN (SELECT ${name.toUpperCase()} FROM t)`,
];

describe('MySQL/MariaDB counter tables where rows are separated', () => {
  test.each(COUNTER_TABLES)('%s is refused wherever its name appears', (name) => {
    for (const sql of forms(name)) {
      const verdict = checkStatement(sql, { ...separated, database: 'shop' });
      expect(verdict.ok, sql).toBe(false);
      // Qualified by information_schema, a table read resets is refused on every connection first.
      if (!verdict.ok && !sql.includes('information_schema')) expect(verdict.rule, sql).toBe('executor-statistics');
    }
  });

  test('wsrep_status, reviewed with the counters, is refused wherever its name appears too', () => {
    for (const sql of forms('wsrep_status')) expect(checkStatement(sql, { ...separated, database: 'shop' }).ok, sql).toBe(false);
  });

  test.each(SHOW_COUNTERS)('%s is refused', (sql) => {
    expect(checkStatement(sql, separated)).toMatchObject({ ok: false, rule: 'executor-statistics' });
  });

  test.each(COUNTER_TABLES)('%s as a plain name still runs where rows are not separated', (name) => {
    for (const sql of [`SELECT ${name} FROM orders`, `SELECT * FROM shop.\`${name}\``])
      expect(checkStatement(sql, { ...plain, database: 'shop' }).ok, sql).toBe(true);
  });

  test('a string holding the name still runs', () => {
    for (const name of COUNTER_TABLES) expect(checkStatement(`SELECT '${name}' AS word`, separated).ok, name).toBe(true);
  });
});

describe("a table's AUTO_INCREMENT where rows are separated", () => {
  test.each([
    'SHOW TABLE STATUS',
    "SHOW TABLE STATUS FROM shop LIKE 'orders'",
    'show table status',
    'SHOW CREATE TABLE orders',
    '/*!SHOW*/ CREATE TABLE orders',
    "SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_NAME = 'orders'",
    'SELECT t.`auto_increment` FROM `INFORMATION_SCHEMA`.`tables` AS t',
    'SELECT * FROM information_schema.tables',
    'SELECT t.* FROM information_schema.TABLES t',
    'SELECT x FROM (SELECT * FROM information_schema.TABLES) AS d',
    "SELECT JSON_OBJECT('a', AUTO_INCREMENT) FROM information_schema . TABLES",
  ])('%s is refused', (sql) => {
    const verdict = checkStatement(sql, separated);
    expect(verdict, sql).toMatchObject({ ok: false, rule: 'executor-statistics' });
    if (!verdict.ok) expect(verdict.message).toMatch(/AUTO_INCREMENT value, which moves with every caller's inserts/);
  });

  test('on a connection that opens information_schema, its unqualified TABLES too', () => {
    expect(checkStatement('SELECT * FROM TABLES', { ...separated, database: 'information_schema' })).toMatchObject({
      ok: false,
      rule: 'executor-statistics',
    });
  });

  test.each([
    'SELECT TABLE_NAME, CREATE_OPTIONS FROM information_schema.TABLES',
    'SELECT COUNT(*) FROM information_schema.TABLES',
    'SELECT * FROM orders',
    'SELECT auto_increment FROM orders',
    'SHOW TABLES',
    'SHOW CREATE VIEW v',
    'SELECT LAST_INSERT_ID()',
  ])('%s still runs', (sql) => {
    expect(checkStatement(sql, separated), sql).toMatchObject({ ok: true });
  });

  test.each(['SHOW TABLE STATUS', 'SHOW CREATE TABLE orders', 'SELECT AUTO_INCREMENT FROM information_schema.TABLES'])(
    '%s still runs without context names',
    (sql) => {
      expect(checkStatement(sql, plain), sql).toMatchObject({ ok: true });
    },
  );
});

describe('figures that move with every caller\'s writes, where rows are separated', () => {
  test.each([
    'SELECT TABLE_NAME, TABLE_ROWS FROM information_schema.TABLES',
    "SELECT PARTITION_NAME, TABLE_ROWS, DATA_LENGTH, UPDATE_TIME FROM information_schema.PARTITIONS WHERE TABLE_NAME = 'porders'",
    'SELECT `data_length` FROM `INFORMATION_SCHEMA`.`tables`',
    'SELECT p.* FROM information_schema.PARTITIONS p',
    'SELECT INDEX_LENGTH, DATA_FREE, AVG_ROW_LENGTH, CHECKSUM, CHECK_TIME, MAX_DATA_LENGTH FROM information_schema.TABLES',
    'SELECT CARDINALITY FROM information_schema.STATISTICS',
    'SHOW INDEX FROM orders',
    'SHOW KEYS IN orders',
    'SELECT NUM_ROWS FROM INNODB_SYS_TABLESTATS',
    'SELECT @@gtid_binlog_pos AS pos',
    'SELECT @@global.gtid_current_pos, @@gtid_binlog_state',
    "SELECT BINLOG_GTID_POS('binlog.000001', 2957)",
    'SELECT UUID_SHORT()',
    "SHOW VARIABLES LIKE 'gtid%'",
    "SHOW GLOBAL VARIABLES WHERE Variable_name = 'gtid_binlog_pos'",
    "SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_VARIABLES WHERE VARIABLE_NAME = 'GTID_BINLOG_POS'",
    'SHOW MASTER STATUS',
    'SHOW BINARY LOGS',
  ])('%s is refused', (sql) => {
    const verdict = checkStatement(sql, separated);
    expect(verdict, sql).toMatchObject({ ok: false, rule: 'executor-statistics' });
    if (!verdict.ok) expect(verdict.message).toMatch(/moves with every caller's writes/);
    expect(checkStatement(sql, plain).ok, sql).toBe(true);
  });

  // Refused by a rule of every connection first (every variable at once holds report_password).
  test.each([
    'SELECT * FROM information_schema.INNODB_SYS_TABLESTATS',
    "SELECT NAME, FILE_SIZE, ALLOCATED_SIZE FROM information_schema.INNODB_SYS_TABLESPACES WHERE NAME LIKE 'shop/%'",
    'SELECT * FROM information_schema.INNODB_TABLESPACES_ENCRYPTION',
    'SHOW SESSION VARIABLES',
    'SELECT * FROM information_schema.SESSION_VARIABLES',
    'SELECT GLOBAL_VALUE FROM information_schema.SYSTEM_VARIABLES',
    'SHOW BINLOG STATUS',
  ])('%s is refused too', (sql) => {
    expect(checkStatement(sql, separated), sql).toMatchObject({ ok: false });
  });

  test.each([
    'SELECT TABLE_NAME, TABLE_TYPE, ENGINE, CREATE_OPTIONS FROM information_schema.TABLES',
    'SELECT PARTITION_NAME, PARTITION_EXPRESSION FROM information_schema.PARTITIONS',
    'SELECT INDEX_NAME, COLUMN_NAME, SEQ_IN_INDEX FROM information_schema.STATISTICS',
    'SELECT COUNT(*) FROM information_schema.PARTITIONS',
    'SELECT @@max_connections AS n',
    "SELECT 'gtid_binlog_pos' AS word",
    'SELECT table_rows FROM orders',
  ])('%s still runs', (sql) => {
    expect(checkStatement(sql, separated), sql).toMatchObject({ ok: true });
  });
});
