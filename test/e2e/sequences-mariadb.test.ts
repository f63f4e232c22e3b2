/**
 * A MariaDB sequence read as a relation, on connections with context names, through the real shim,
 * daemon and server. A shared NOCACHE sequence's `next_not_cached_value` moves with every caller's
 * NEXTVAL, so it counts the inserts of the rows context values hide: refused there, read directly,
 * through a view or a body, or by sample_rows, naming the sequence (describe_table shows its columns
 * alone and answers). NEXTVAL, LASTVAL, SETVAL and NEXT / PREVIOUS VALUE FOR (the session's own
 * values), in a statement or a body, still answer on a writable connection there, and a connection
 * without context names still reads the sequence.
 */
import { randomBytes } from 'node:crypto';
import type mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { MariadbLogin, MYSQL_TEST_DB, openMariadbAdmin } from '../helpers/mariadb-login.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('mysql');
const s = `${process.pid}_${randomBytes(3).toString('hex')}`;
const login = new MariadbLogin(`mseq_${s}`);
const db = MYSQL_TEST_DB;

describe.skipIf(!available)('sequences where rows are separated on MariaDB', () => {
  const home = new TestHome();
  let root: mysql.Connection;
  let rdctx: ShimHandle;
  let wrctx: ShimHandle;
  let plain: ShimHandle;
  const seq = `mseq_ids_${s}`;
  const view = `mseq_view_${s}`;
  const fn = `mseq_peek_${s}`;
  const proc = `mseq_proc_${s}`;
  const take = `mseq_take_${s}`;
  const log = `mseq_log_${s}`;
  const events = `mseq_events_${s}`;
  const counts = `mseq_counts_${s}`;
  const porders = `mseq_porders_${s}`;

  beforeAll(async () => {
    root = await openMariadbAdmin();
    await root.query(`CREATE SEQUENCE ${seq} START WITH 1 NOCACHE`);
    // Other customers' inserts: 41 values taken.
    for (let i = 0; i < 41; i++) await root.query(`SELECT NEXTVAL(${seq})`);
    await login.create(root);
    const definer = await login.definer();
    await root.query(`CREATE DEFINER = ${definer} SQL SECURITY INVOKER VIEW ${view} AS SELECT next_not_cached_value AS n FROM ${seq}`);
    await root.query(
      `CREATE DEFINER = ${definer} FUNCTION ${fn}() RETURNS BIGINT READS SQL DATA SQL SECURITY INVOKER RETURN (SELECT next_not_cached_value FROM ${seq})`,
    );
    await root.query(`CREATE DEFINER = ${definer} PROCEDURE ${proc}() READS SQL DATA SQL SECURITY INVOKER SELECT * FROM ${db}.${seq}`);
    await root.query(
      `CREATE DEFINER = ${definer} FUNCTION ${take}() RETURNS BIGINT MODIFIES SQL DATA SQL SECURITY INVOKER RETURN NEXT VALUE FOR ${seq} + LASTVAL(${db}.${seq}) * 0`,
    );
    await root.query(`CREATE TABLE ${log} (v BIGINT) ENGINE=Aria`);
    // A shared table every customer inserts into: its AUTO_INCREMENT is 42 after 41 rows.
    await root.query(`CREATE TABLE ${events} (id INT AUTO_INCREMENT PRIMARY KEY, customer_id INT) ENGINE=Aria`);
    for (let i = 0; i < 41; i++) await root.query(`INSERT INTO ${events} (customer_id) VALUES (${2 + (i % 3)})`);
    await root.query(
      `CREATE DEFINER = ${definer} SQL SECURITY INVOKER VIEW ${counts} AS SELECT TABLE_NAME AS t, AUTO_INCREMENT AS a FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${db}'`,
    );
    // A table partitioned by customer: each partition's figures are one customer's.
    await root.query(
      `CREATE TABLE ${porders} (id INT, customer_id INT) ENGINE=Aria PARTITION BY LIST (customer_id) (PARTITION c1 VALUES IN (1), PARTITION c2 VALUES IN (2), PARTITION c3 VALUES IN (3))`,
    );
    await root.query(`INSERT INTO ${porders} VALUES (1, 1), (2, 2), (3, 2), (4, 2), (5, 3)`);
    await login.grant(root, [
      `INSERT ON ${db}.${porders}`,
      `EXECUTE ON FUNCTION ${db}.${take}`,
      `INSERT ON ${db}.${log}`,
      `INSERT ON ${db}.${events}`,
      `SELECT, SHOW VIEW ON ${db}.${counts}`,
      `SELECT, INSERT ON ${db}.${seq}`,
      `SELECT, SHOW VIEW ON ${db}.${view}`,
      `EXECUTE ON FUNCTION ${db}.${fn}`,
      `EXECUTE ON PROCEDURE ${db}.${proc}`,
    ]);
    const url = login.url({ withPassword: false });
    home.ok(['add', '--no-test', 'rdctx', url, '--password-stdin', '--context', 'CUSTOMER_ID'], { input: login.password });
    home.ok(['add', '--no-test', 'wrctx', url, '--password-stdin', '--allow-write', '--context', 'CUSTOMER_ID'], {
      input: login.password,
    });
    home.ok(['add', '--no-test', 'plain', url, '--password-stdin'], { input: login.password });
    const env = { ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' };
    rdctx = await startShim(env, ['--connection', 'rdctx']);
    wrctx = await startShim(env, ['--connection', 'wrctx']);
    plain = await startShim(home.env, ['--connection', 'plain']);
  });

  afterAll(async () => {
    await rdctx?.close();
    await wrctx?.close();
    await plain?.close();
    await home.dispose();
    for (const sql of [
      `DROP VIEW IF EXISTS ${view}`,
      `DROP FUNCTION IF EXISTS ${fn}`,
      `DROP PROCEDURE IF EXISTS ${proc}`,
      `DROP FUNCTION IF EXISTS ${take}`,
      `DROP TABLE IF EXISTS ${log}`,
      `DROP VIEW IF EXISTS ${counts}`,
      `DROP TABLE IF EXISTS ${events}`,
      `DROP TABLE IF EXISTS ${porders}`,
      `DROP SEQUENCE IF EXISTS ${seq}`,
    ])
      await root?.query(sql).catch(() => {});
    await login.drop(root);
    await root?.end();
  });

  const refused = (result: Awaited<ReturnType<ShimHandle['call']>>): void => {
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
    expect(textOf(result)).toContain(seq);
    expect(textOf(result)).toMatch(/is a sequence/);
  };

  it.each([
    `SELECT next_not_cached_value FROM ${seq}`,
    `SELECT * FROM ${seq}`,
    `SELECT * FROM ${db}.${seq}`,
    `SELECT n FROM ${view}`,
    `SELECT ${fn}()`,
    `SELECT 1 FROM DUAL WHERE EXISTS (SELECT * FROM ${seq} WHERE next_not_cached_value > 40)`,
  ])('refuses %s on a read-only connection with context names', async (sql) => {
    refused(await rdctx.call('run_query', { sql }));
  });

  it('refuses the sequence read as a relation on a writable connection with context names', async () => {
    refused(await wrctx.call('run_query', { sql: `SELECT next_not_cached_value FROM ${seq}` }));
    refused(await wrctx.call('run_query', { sql: `SELECT NEXT VALUE FOR ${seq} FROM ${seq}` }));
    refused(await wrctx.call('run_query', { sql: `SELECT NEXTVAL(${seq}) FROM ${db}.${seq}` }));
    refused(await wrctx.call('run_query', { sql: `CALL ${proc}()` }));
  });

  it('refuses sample_rows on the sequence and on a view over it', async () => {
    refused(await rdctx.call('sample_rows', { table: seq }));
    refused(await rdctx.call('sample_rows', { table: view }));
  });

  it('answers describe_table on the sequence: its columns, not its position', async () => {
    const result = await rdctx.call('describe_table', { table: seq });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toContain('(sequence)');
    expect(textOf(result)).toMatch(/next_not_cached_value \| bigint/);
  });

  it('answers the session-local sequence functions on a writable connection with context names', async () => {
    for (const sql of [
      `SELECT NEXTVAL(${seq}) AS v`,
      `SELECT NEXT VALUE FOR ${seq} AS v`,
      `SELECT NEXT VALUE FOR ${db}.${seq} AS v`,
      `SELECT LASTVAL(${seq}) AS v`,
      `SELECT PREVIOUS VALUE FOR ${seq} AS v`,
      `SELECT SETVAL(${seq}, 1000) AS v`,
      // A body's NEXT VALUE FOR and LASTVAL, in a write.
      `INSERT INTO ${log} (v) VALUES (${take}())`,
    ]) {
      const result = await wrctx.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    }
  });

  it.each([
    `SELECT AUTO_INCREMENT FROM information_schema.TABLES WHERE TABLE_NAME = '${events}'`,
    `SELECT t.\`auto_increment\` FROM INFORMATION_SCHEMA.tables AS t WHERE TABLE_NAME = '${events}'`,
    `SELECT * FROM information_schema.TABLES WHERE TABLE_NAME = '${events}'`,
    `SELECT a FROM ${counts} WHERE t = '${events}'`,
    `SHOW TABLE STATUS LIKE '${events}'`,
    `SHOW TABLE STATUS FROM ${db} LIKE '${events}'`,
    `SHOW CREATE TABLE ${events}`,
  ])("refuses %s, a table's AUTO_INCREMENT, on a connection with context names", async (sql) => {
    const before = await plain.call('run_query', { sql });
    expect(before.isError, textOf(before)).toBeFalsy();
    expect(textOf(before)).toMatch(/\b42\b/);
    const result = await rdctx.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
    expect(textOf(result)).toContain('AUTO_INCREMENT');
  });

  it.each([
    `SELECT PARTITION_NAME, TABLE_ROWS FROM information_schema.PARTITIONS WHERE TABLE_NAME = '${porders}' AND PARTITION_NAME = 'c2'`,
    `SELECT PARTITION_NAME, DATA_LENGTH FROM information_schema.PARTITIONS WHERE TABLE_NAME = '${porders}' AND PARTITION_NAME = 'c2'`,
    `SELECT TABLE_ROWS FROM information_schema.TABLES WHERE TABLE_NAME = '${porders}'`,
  ])("refuses %s, figures that move with every caller's writes, on a connection with context names", async (sql) => {
    const before = await plain.call('run_query', { sql });
    expect(before.isError, textOf(before)).toBeFalsy();
    const result = await rdctx.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toContain('(rule: executor-statistics)');
    expect(textOf(result)).toContain("moves with every caller's writes");
  });

  it("shows the partition's own count without context names, which is what is refused with them", async () => {
    const result = await plain.call('run_query', {
      sql: `SELECT TABLE_ROWS AS n FROM information_schema.PARTITIONS WHERE TABLE_NAME = '${porders}' AND PARTITION_NAME = 'c2'`,
    });
    expect(textOf(result)).toMatch(/\b3\b/);
  });

  it.each(['SELECT @@gtid_binlog_pos AS pos', 'SELECT @@global.gtid_current_pos AS pos', 'SELECT UUID_SHORT() AS u'])(
    'refuses %s, a server-wide position or counter, on a connection with context names',
    async (sql) => {
      const before = await plain.call('run_query', { sql });
      expect(before.isError, textOf(before)).toBeFalsy();
      const result = await rdctx.call('run_query', { sql });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toContain('(rule: executor-statistics)');
    },
  );

  it("answers information_schema.TABLES' other columns and counts there", async () => {
    for (const sql of [
      `SELECT TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_NAME = '${events}'`,
      `SELECT COUNT(*) FROM information_schema.TABLES WHERE TABLE_SCHEMA = '${db}'`,
    ]) {
      const result = await rdctx.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
    }
  });

  it('reads the sequence on a connection without context names', async () => {
    const result = await plain.call('run_query', { sql: `SELECT next_not_cached_value AS n FROM ${seq}` });
    expect(result.isError, textOf(result)).toBeFalsy();
    const [rows] = (await root.query(`SELECT next_not_cached_value AS n FROM ${seq}`)) as unknown as [{ n: number }[]];
    expect(textOf(result)).toContain(String(rows[0]?.n));
  });
});
