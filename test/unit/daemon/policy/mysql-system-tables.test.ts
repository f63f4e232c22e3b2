import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import type { PolicyOptions } from '../../../../daemon/policy/types.js';

const plain: PolicyOptions = { dialect: 'mysql', allowWrite: false };
const writable: PolicyOptions = { dialect: 'mysql', allowWrite: true };
const separated: PolicyOptions = { dialect: 'mysql', allowWrite: false, rowSeparation: true };

/**
 * MySQL/MariaDB system schemas (information_schema, performance_schema, sys, mysql): a table is
 * read only if it is on the reviewed list; a table whose read resets server counters, shows other
 * sessions' work, or that nobody reviewed yet (a plugin's new table) is refused on every connection.
 */
describe('MySQL/MariaDB system tables', () => {
  test.each([
    'SELECT page_size, compress_ops FROM information_schema.INNODB_CMP_RESET WHERE compress_ops > 0',
    'SELECT * FROM information_schema.innodb_cmpmem_reset',
    'SELECT * FROM `information_schema`.`INNODB_CMP_PER_INDEX_RESET`',
    'SHOW INNODB_CMP_RESET',
    'SHOW innodb_cmpmem_reset',
  ])('reading-resets table refused on every connection: %s', (sql) => {
    for (const options of [plain, writable, separated]) {
      const verdict = checkStatement(sql, options);
      expect(verdict.ok, JSON.stringify(options)).toBe(false);
      if (!verdict.ok) expect(verdict.message).toMatch(/INNODB_CMP(MEM)?(_PER_INDEX)?_RESET/i);
    }
  });

  test.each([
    'SELECT STATEMENT_SCHEMA, STATEMENT_TEXT FROM information_schema.QUERY_CACHE_INFO',
    'SELECT * FROM information_schema.`query_cache_info`',
    'SELECT * FROM information_schema.METADATA_LOCK_INFO',
    'SHOW METADATA_LOCK_INFO',
    'SELECT * FROM performance_schema.user_variables_by_thread',
    'SELECT * FROM performance_schema.session_connect_attrs',
    'SELECT * FROM performance_schema.metadata_locks',
  ])("other sessions' text refused on every connection: %s", (sql) => {
    for (const options of [plain, writable, separated]) expect(checkStatement(sql, options).ok, JSON.stringify(options)).toBe(false);
  });

  test.each([
    ['SELECT * FROM information_schema.A_PLUGINS_NEW_TABLE', 'information_schema.A_PLUGINS_NEW_TABLE'],
    ['SELECT * FROM performance_schema.some_future_table', 'performance_schema.some_future_table'],
    ['SELECT sys.some_future_function(1)', 'sys.some_future_function'],
    ['SELECT * FROM mysql.password_reuse_check_history', 'mysql.password_reuse_check_history'],
    ['SHOW A_PLUGINS_NEW_TABLE', 'A_PLUGINS_NEW_TABLE'],
  ])('a table nobody reviewed is refused on every connection, named: %s', (sql, named) => {
    for (const options of [plain, writable]) {
      const verdict = checkStatement(sql, options);
      expect(verdict.ok).toBe(false);
      if (!verdict.ok) expect(verdict.message.toLowerCase()).toContain(named.toLowerCase());
    }
  });

  test.each([
    ['SELECT * FROM QUERY_CACHE_INFO', 'information_schema'],
    ['SELECT a.ID FROM TABLES a, QUERY_CACHE_INFO q', 'information_schema'],
    ['SELECT 1 FROM TABLES t JOIN COLUMNS c ON t.TABLE_NAME = c.TABLE_NAME, INNODB_CMP_RESET', 'information_schema'],
    ['SELECT * FROM (SELECT 1) d, A_PLUGINS_NEW_TABLE', 'information_schema'],
    ['SELECT * FROM user_variables_by_thread', 'performance_schema'],
    // A table in parentheses, in a subquery's parenthesised FROM, after a table function.
    ['SELECT * FROM (INNODB_CMP_RESET)', 'information_schema'],
    ['SELECT * FROM TABLES JOIN (INNODB_CMP_RESET) ON 1', 'information_schema'],
    ['SELECT * FROM TABLES WHERE 1 IN (SELECT 1 FROM (QUERY_CACHE_INFO))', 'information_schema'],
    ['SELECT * FROM (TABLES, QUERY_CACHE_INFO)', 'information_schema'],
    ["SELECT * FROM JSON_TABLE('[1]', '$[*]' COLUMNS(a INT PATH '$')) j, INNODB_CMP_RESET", 'information_schema'],
  ])('unqualified on a connection that opens the schema: %s', (sql, database) => {
    expect(checkStatement(sql, { ...plain, database }).ok).toBe(false);
  });

  test.each([
    'SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_SCHEMA = DATABASE()',
    'SELECT * FROM information_schema.COLUMNS c JOIN information_schema.KEY_COLUMN_USAGE k ON c.COLUMN_NAME = k.COLUMN_NAME',
    'SELECT * FROM INFORMATION_SCHEMA.ROUTINES',
    'SELECT * FROM information_schema.user_variables',
    'SELECT sys.format_bytes(1024)',
    'SELECT * FROM mysql.help_topic',
    'SHOW LOCALES',
    'SHOW ENGINES',
    'SHOW TABLES',
  ])('a reviewed read passes on every connection: %s', (sql) => {
    for (const options of [plain, separated]) expect(checkStatement(sql, options).ok, JSON.stringify(options)).toBe(true);
  });

  // sql_yacc.yy table_ident `'.' ident`: a lone dot names the current database's table.
  test.each([
    'SELECT q.* FROM (SELECT 1 a) x JOIN .INNODB_CMP_RESET q',
    'SELECT * FROM .INNODB_CMP_RESET',
    'SELECT * FROM . INNODB_CMP_RESET',
    'SELECT * FROM /* c */ . /* d */ INNODB_CMP_RESET',
    'SELECT * FROM TABLES t, .QUERY_CACHE_INFO',
    'SELECT * FROM (.INNODB_CMP_RESET)',
    'SELECT * FROM TABLES JOIN.`INNODB_CMP_RESET` ON 1',
    'SELECT * FROM information_schema . INNODB_CMP_RESET',
    'SELECT * FROM `information_schema`.INNODB_CMP_RESET',
  ])('a lone dot names the opened system schema: %s', (sql) => {
    expect(checkStatement(sql, { ...plain, database: 'information_schema' }).ok).toBe(false);
  });

  test('a qualified name after FROM is not read as the opened schema', () => {
    // `FROM.t` is the table t of the database named FROM (sql_lex.cc MY_LEX_IDENT).
    expect(checkStatement('SELECT * FROM app.INNODB_CMP_RESET', { ...plain, database: 'information_schema' }).ok).toBe(true);
    expect(checkStatement('SELECT * FROM .INNODB_CMP_RESET', { ...plain, database: 'app' }).ok).toBe(true);
  });

  test('unqualified reviewed reads pass on a connection that opens information_schema', () => {
    const sql = 'SELECT TABLE_NAME, TABLE_ROWS FROM TABLES t, COLUMNS c WHERE t.TABLE_NAME = c.TABLE_NAME';
    expect(checkStatement(sql, { ...plain, database: 'information_schema' }).ok).toBe(true);
    const nested = 'SELECT * FROM (TABLES t JOIN (COLUMNS c) ON t.TABLE_NAME = c.TABLE_NAME) WHERE 1 IN (SELECT 1 FROM (SELECT 1) d)';
    expect(checkStatement(nested, { ...plain, database: 'information_schema' }).ok).toBe(true);
  });

  test.each([
    'SELECT * FROM information_schema.INNODB_CMP',
    'SELECT * FROM performance_schema.table_io_waits_summary_by_table',
    'SELECT * FROM sys.schema_unused_indexes',
    'SHOW INNODB_CMP',
  ])('a counter of executor work passes where rows are not separated, refused where they are: %s', (sql) => {
    expect(checkStatement(sql, plain).ok).toBe(true);
    expect(checkStatement(sql, separated).ok).toBe(false);
  });
});
