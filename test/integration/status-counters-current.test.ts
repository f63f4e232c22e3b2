/**
 * The MySQL/MariaDB executor statistics rule (daemon/policy/status-counters.ts) against the live
 * server's own catalog: every information_schema table whose name says it counts (status,
 * statistics, metrics, buffer pool, compression, caches, thread pool, trace) is refused where rows
 * are separated, or reviewed below as no counter of executor work; so is every table of
 * performance_schema and sys; and every SHOW ... STATUS or ..._STATISTICS form of the server's
 * help (mysql.help_topic) is refused there, or reviewed. A server release with a new counter
 * table or SHOW form fails here, naming it.
 */
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkStatement } from '../../daemon/policy/index.js';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('mysql');

/** information_schema tables whose names match COUNTING, reviewed as no counter of executor work. */
const NOT_COUNTERS: Readonly<Record<string, string>> = {
  STATISTICS: "index definitions and cardinality estimates over the whole table (as TABLES' TABLE_ROWS)",
  INNODB_SYS_TABLESTATS: 'a row estimate per table, over the whole table',
  INNODB_FT_INDEX_CACHE:
    'the full-text index of the table a person named in the global innodb_ft_aux_table, which a read-only session cannot set',
  INNODB_FT_INDEX_TABLE: 'as INNODB_FT_INDEX_CACHE',
  KEYWORDS: 'SQL keywords',
};

/** SHOW forms of the help that match, reviewed: no counter of executor work, or refused on every connection by another rule. */
const SHOW_REVIEWED: Readonly<Record<string, string>> = {
  'SHOW TABLE STATUS': 'a row estimate per table, over the whole table',
  'SHOW FUNCTION STATUS': 'routine definitions',
  'SHOW PROCEDURE STATUS': 'routine definitions',
  'SHOW PACKAGE STATUS': 'routine definitions',
  'SHOW PACKAGE BODY STATUS': 'routine definitions',
  'SHOW MASTER STATUS': 'the binary log position, which reads do not move',
};

const COUNTING = /STATUS|STATISTICS|STATS|METRICS|BUFFER|CMP|CACHE|THREAD_POOL|TRACE|RESPONSE/;
const separated = { dialect: 'mysql', allowWrite: false, rowSeparation: true } as const;

describe.skipIf(!available)('the executor statistics rule against the live MySQL/MariaDB catalog', () => {
  let admin: mysql.Connection;
  const u = new URL(MYSQL_URL);

  beforeAll(async () => {
    admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username) });
  });
  afterAll(async () => {
    await admin?.end();
  });

  const tablesOf = async (schema: string): Promise<string[]> => {
    const [rows] = await admin.query('SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ?', [schema]);
    return (rows as { name: string }[]).map((r) => r.name);
  };

  test('every counting information_schema table is refused where rows are separated, or reviewed', async () => {
    const unjudged = (await tablesOf('information_schema'))
      .filter((name) => COUNTING.test(name.toUpperCase()) && !(name.toUpperCase() in NOT_COUNTERS))
      .filter((name) => checkStatement(`SELECT * FROM information_schema.${name}`, separated).ok);
    expect(unjudged, 'information_schema tables to refuse in status-counters.ts or review here').toEqual([]);
  });

  test.each(['performance_schema', 'sys'])('every table and view of %s is refused where rows are separated', async (schema) => {
    const names = await tablesOf(schema);
    const passed = names.filter((name) => checkStatement(`SELECT * FROM ${schema}.\`${name}\``, separated).ok);
    expect(passed).toEqual([]);
    // And on a connection that opens the schema, unqualified.
    expect(names.filter((name) => checkStatement(`SELECT * FROM \`${name}\``, { ...separated, database: schema }).ok)).toEqual([]);
  });

  test("every SHOW ... STATUS and ..._STATISTICS form of the server's help is refused where rows are separated, or reviewed", async () => {
    const [rows] = await admin.query(
      "SELECT name FROM mysql.help_topic WHERE name LIKE 'SHOW%' AND (name LIKE '%STATUS%' OR name LIKE '%STATISTICS%' OR name LIKE '%RESPONSE%')",
    );
    const forms = (rows as { name: string }[]).map((r) => r.name.replaceAll('\\', '').replace(/\s*\(.*\)$/, ''));
    expect(forms.length).toBeGreaterThan(0);
    const unjudged = forms.filter((form) => !(form in SHOW_REVIEWED) && checkStatement(form, separated).ok);
    expect(unjudged, 'SHOW forms to refuse in status-counters.ts or review here').toEqual([]);
  });
});
