import { describe, expect, test } from 'vitest';
import { checkStatement } from '../../../../daemon/policy/index.js';
import type { Engine } from '../../../../shared/connection-url.js';

const writable = (dialect: Engine) => ({ dialect, allowWrite: true });

describe('a writable connection', () => {
  test.each<[string, Engine]>([
    ['INSERT INTO t VALUES (1)', 'sqlite'],
    ['UPDATE t SET a = 1 WHERE id = 2', 'postgres'],
    ['DELETE FROM t', 'mysql'],
    ['CREATE TABLE t (a int)', 'hana'],
    ['DROP TABLE t', 'postgres'],
    ['ALTER TABLE t ADD COLUMN b int', 'mysql'],
    ['TRUNCATE TABLE t', 'postgres'],
    ['MERGE INTO t USING u ON t.id = u.id WHEN MATCHED THEN DELETE', 'postgres'],
    ['REPLACE INTO t VALUES (1)', 'mysql'],
    ['UPSERT t VALUES (1) WITH PRIMARY KEY', 'hana'],
    ['CALL refresh_totals()', 'postgres'],
    ['DO $$ BEGIN UPDATE t SET a = 1; END $$', 'postgres'],
    ['VACUUM', 'sqlite'],
    ['PRAGMA journal_mode = WAL', 'sqlite'],
    ['EXPLAIN ANALYZE DELETE FROM t', 'postgres'],
    ["SELECT nextval('s')", 'postgres'],
    ['SELECT s.NEXTVAL FROM DUMMY', 'hana'],
    ['SELECT "S"."NEXTVAL" FROM DUMMY', 'hana'],
    ['SELECT `s`.`nextval` FROM dual', 'mysql'],
    ['SELECT "s"."nextval" FROM dual', 'mysql'],
    ['WITH x AS (DELETE FROM t RETURNING *) SELECT * FROM x', 'postgres'],
    ['SELECT * FROM t FOR UPDATE', 'mysql'],
    ['SELECT * INTO newt FROM t', 'postgres'],
    ['COPY t FROM STDIN', 'postgres'],
    ['GRANT SELECT ON t TO someone', 'postgres'],
  ])('runs the write %j (%s) and reports it as a write', (sql, dialect) => {
    expect(checkStatement(sql, writable(dialect))).toEqual({ ok: true, kind: 'write' });
  });

  test.each<[string, Engine]>([
    ['SELECT * FROM t', 'postgres'],
    ['SHOW TABLES', 'mysql'],
    ['PRAGMA table_info(t)', 'sqlite'],
    ['SELECT * FROM DUMMY', 'hana'],
  ])('still reports the read %j (%s) as a read', (sql, dialect) => {
    expect(checkStatement(sql, writable(dialect))).toEqual({ ok: true, kind: 'read' });
  });

  test.each<[string, Engine, string]>([
    ['INSERT INTO t VALUES (1); DROP TABLE u', 'postgres', 'multiple-statements'],
    ['COMMIT; DROP TABLE t', 'mysql', 'multiple-statements'],
    ['', 'sqlite', 'empty'],
    ["INSERT INTO t VALUES ('x)", 'hana', 'unterminated'],
    ['BEGIN', 'sqlite', 'transaction-control'],
    ['COMMIT', 'postgres', 'transaction-control'],
    ['SET TRANSACTION READ WRITE', 'postgres', 'transaction-control'],
    ['SET search_path TO other', 'postgres', 'session-change'],
    ["SELECT set_config('mcp.customer_id', '2', false)", 'postgres', 'session-change'],
    ["UPDATE pg_settings SET setting = '2' WHERE name = 'mcp.customer_id'", 'postgres', 'session-change'],
    ['DISCARD ALL', 'postgres', 'session-change'],
    ['SET @mcp_customer_id = 2', 'mysql', 'session-change'],
    ['UPDATE t SET a = (@x := a + 1)', 'mysql', 'session-change'],
    ['SELECT 2 INTO @mcp_customer_id', 'mysql', 'session-change'],
    // An OUT or INOUT argument assigns the variable when the procedure returns.
    ['CALL p(@mcp_customer_id)', 'mysql', 'session-change'],
    ['CALL shop.p(1, @`mcp_customer_id`)', 'mysql', 'session-change'],
    ["CALL p(@'mcp_customer_id')", 'mysql', 'session-change'],
    ['EXECUTE IMMEDIATE ? USING @mcp_customer_id', 'mysql', 'session-change'],
    ['GET DIAGNOSTICS @mcp_customer_id = NUMBER', 'mysql', 'session-change'],
    ['GET CURRENT DIAGNOSTICS CONDITION 1 @mcp_customer_id = MESSAGE_TEXT', 'mysql', 'session-change'],
    ['USE otherdb', 'mysql', 'session-change'],
    ["SET 'CUSTOMER_ID' = '2'", 'hana', 'session-change'],
    ["UNSET 'CUSTOMER_ID'", 'hana', 'session-change'],
    ["DO BEGIN SET 'CUSTOMER_ID' = '2' END", 'hana', 'session-change'],
    ["SELECT pg_read_file('/etc/passwd')", 'postgres', 'denied-function'],
    ["SELECT lo_import('/etc/passwd')", 'postgres', 'denied-function'],
    ["SELECT dblink('host=elsewhere', 'select 1')", 'postgres', 'denied-function'],
    ['SELECT pg_advisory_lock(1)', 'postgres', 'denied-function'],
    ['SELECT pg_terminate_backend(1)', 'postgres', 'denied-function'],
    ["INSERT INTO t SELECT LOAD_FILE('/etc/passwd')", 'mysql', 'denied-function'],
    ['SELECT SLEEP(10)', 'mysql', 'denied-function'],
    ["SELECT GET_LOCK('a', 1)", 'mysql', 'denied-function'],
    ["SELECT load_extension('/tmp/evil.so')", 'sqlite', 'denied-function'],
    ["COPY t TO PROGRAM 'sh -c id'", 'postgres', 'host-access'],
    ["SELECT * FROM t INTO OUTFILE '/tmp/x'", 'mysql', 'host-access'],
    ["LOAD DATA INFILE '/etc/passwd' INTO TABLE t", 'mysql', 'host-access'],
    ["ATTACH DATABASE '/tmp/other.db' AS other", 'sqlite', 'host-access'],
    ["VACUUM INTO '/tmp/copy.db'", 'sqlite', 'host-access'],
    ["EXPORT t AS CSV INTO '/tmp/x'", 'hana', 'host-access'],
    ['LOCK TABLES t WRITE', 'mysql', 'lock-statement'],
    ['FLUSH TABLES WITH READ LOCK', 'mysql', 'server-admin'],
    ["ALTER SYSTEM SET work_mem = '1GB'", 'postgres', 'server-admin'],
  ])('still refuses %j (%s) under rule %s', (sql, dialect, rule) => {
    expect(checkStatement(sql, writable(dialect))).toMatchObject({ ok: false, rule });
  });

  test.each(['CALL pn(@`q`)', "CALL pn(@'q')", 'CALL pn(@q)', 'EXECUTE s USING @`q`'])(
    'names the variable %s assigns, however it is quoted',
    (sql) => {
      const verdict = checkStatement(sql, writable('mysql'));
      expect(verdict).toMatchObject({ ok: false, rule: 'session-change' });
      expect(JSON.stringify(verdict)).toMatch(/@q\b/);
    },
  );
});
