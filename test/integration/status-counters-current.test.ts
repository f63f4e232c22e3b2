/**
 * The MySQL/MariaDB system tables (daemon/policy/mysql-system-tables.data.ts) against the live
 * server's own catalog, with the information_schema plugins the server ships installed for the
 * run: every table and view of information_schema, performance_schema, sys and mysql, and every
 * routine of sys, is reviewed, or this fails naming it (at runtime an unreviewed one is refused on
 * every connection). Each is judged as reviewed: `nowhere` refused on every connection, also as
 * MariaDB's `SHOW <table>`; `unseparated` refused where rows are separated; `everywhere` read
 * there too. Every information_schema table whose name says it counts (status, statistics,
 * metrics, buffer pool, compression, caches, thread pool, trace) is refused where rows are
 * separated unless reviewed below as no counter of executor work; and every SHOW ... STATUS or
 * ..._STATISTICS form of the server's help (mysql.help_topic) is refused there, or reviewed.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { checkStatement } from '../../daemon/policy/index.js';
import { SYSTEM_TABLES } from '../../daemon/policy/mysql-system-tables.data.js';
import type { PolicyOptions } from '../../daemon/policy/types.js';
import { MYSQL_URL, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('mysql');

/** information_schema tables whose names match COUNTING, reviewed as no counter of executor work. */
const NOT_COUNTERS: Readonly<Record<string, string>> = {
  STATISTICS: "index definitions and cardinality estimates over the whole table (as TABLES' TABLE_ROWS)",
  INNODB_SYS_TABLESTATS: 'a row estimate per table, over the whole table',
  KEYWORDS: 'SQL keywords',
};

/** SHOW forms of the help that match, reviewed: no counter of executor work, or refused on every connection by another rule. */
const SHOW_REVIEWED: Readonly<Record<string, string>> = {
  'SHOW FUNCTION STATUS': 'routine definitions',
  'SHOW PROCEDURE STATUS': 'routine definitions',
  'SHOW PACKAGE STATUS': 'routine definitions',
  'SHOW PACKAGE BODY STATUS': 'routine definitions',
  'SHOW MASTER STATUS': 'the binary log position, which reads do not move',
};

/**
 * The plugins MariaDB ships (in its plugin_dir) that add information_schema tables: DISKS; LOCALES;
 * METADATA_LOCK_INFO; QUERY_CACHE_INFO; QUERY_RESPONSE_TIME; WSREP_MEMBERSHIP and WSREP_STATUS.
 */
const IS_PLUGINS = ['disks', 'locales', 'metadata_lock_info', 'query_cache_info', 'query_response_time', 'wsrep_info'];

const COUNTING = /STATUS|STATISTICS|STATS|METRICS|BUFFER|CMP|CACHE|THREAD_POOL|TRACE|RESPONSE/;
const plain: PolicyOptions = { dialect: 'mysql', allowWrite: false };
const writable: PolicyOptions = { dialect: 'mysql', allowWrite: true };
const separated: PolicyOptions = { dialect: 'mysql', allowWrite: false, rowSeparation: true };

describe.skipIf(!available)('the MySQL/MariaDB system tables against the live catalog', () => {
  let admin: mysql.Connection;
  const installed: string[] = [];
  /** The plugins whose library the server has. */
  const shipped: string[] = [];
  const u = new URL(MYSQL_URL);

  beforeAll(async () => {
    admin = await mysql.createConnection({ host: u.hostname, port: Number(u.port || 3306), user: decodeURIComponent(u.username) });
    const [[dir]] = (await admin.query('SELECT @@plugin_dir AS dir')) as unknown as [{ dir: string }[]];
    const [rows] = await admin.query('SELECT PLUGIN_LIBRARY AS lib FROM information_schema.PLUGINS WHERE PLUGIN_LIBRARY IS NOT NULL');
    const present = new Set((rows as { lib: string }[]).map((r) => r.lib));
    for (const plugin of IS_PLUGINS) {
      if (!existsSync(join(dir?.dir ?? '', `${plugin}.so`))) continue;
      shipped.push(plugin);
      if (present.has(`${plugin}.so`)) continue;
      // Another run may install it at the same moment: then it is that run's to uninstall.
      const ok = await admin.query(`INSTALL SONAME '${plugin}'`).then(
        () => true,
        () => false,
      );
      if (ok) installed.push(plugin);
    }
  });
  afterAll(async () => {
    for (const plugin of installed) await admin?.query(`UNINSTALL SONAME '${plugin}'`);
    await admin?.end();
  });

  const namesOf = async (schema: string): Promise<string[]> => {
    const [rows] = await admin.query(
      'SELECT TABLE_NAME AS name FROM information_schema.TABLES WHERE TABLE_SCHEMA = ? UNION SELECT ROUTINE_NAME FROM information_schema.ROUTINES WHERE ROUTINE_SCHEMA = ?',
      [schema, schema],
    );
    return (rows as { name: string }[]).map((r) => r.name);
  };

  test("the plugins' tables are in the catalog for the run", async () => {
    const names = await namesOf('information_schema');
    if (shipped.includes('query_cache_info')) expect(names).toContain('QUERY_CACHE_INFO');
    if (shipped.includes('metadata_lock_info')) expect(names).toContain('METADATA_LOCK_INFO');
  });

  test.each(Object.keys(SYSTEM_TABLES))('every table, view and routine of %s is reviewed', async (schema) => {
    const names = await namesOf(schema);
    expect(names.length).toBeGreaterThan(0);
    const reviewed = SYSTEM_TABLES[schema];
    const unreviewed = names.filter((name) => !reviewed?.has(name.toLowerCase()));
    expect(unreviewed, `${schema} names to classify in daemon/policy/mysql-system-tables.data.ts`).toEqual([]);
  });

  /**
   * Reviewed as the server's fixed lists, but refused whole by the credential rule: they hold
   * report_password in clear. One variable by name still answers everywhere.
   */
  const WHOLE_REFUSED = new Set(['global_variables', 'session_variables', 'system_variables']);

  /** A column of names of each information_schema table whose other columns hold figures refused where rows are separated. */
  const FIGURE_TABLES: Readonly<Record<string, string>> = { tables: 'TABLE_NAME', partitions: 'PARTITION_NAME', statistics: 'INDEX_NAME' };

  test.each(Object.keys(SYSTEM_TABLES))('every name of %s is judged as reviewed', async (schema) => {
    const wrong: string[] = [];
    for (const name of await namesOf(schema)) {
      const review = SYSTEM_TABLES[schema]?.get(name.toLowerCase());
      if (schema === 'information_schema' && WHOLE_REFUSED.has(name.toLowerCase())) {
        const whole = [plain, writable, separated].map((o) => checkStatement(`SELECT * FROM ${schema}.\`${name}\``, o));
        const one = `SELECT VARIABLE_VALUE FROM ${schema}.\`${name}\` WHERE VARIABLE_NAME = 'max_connections'`;
        // Where rows are separated, the log positions among them are refused (status-counters.ts).
        const byName = [plain, writable].map((o) => checkStatement(one, o).ok);
        const separatedByName = checkStatement(one, separated);
        if (
          review?.use !== 'everywhere' ||
          whole.some((v) => v.ok || v.rule !== 'credential-read') ||
          byName.includes(false) ||
          separatedByName.ok ||
          separatedByName.rule !== 'executor-statistics'
        )
          wrong.push(
            `${name} (${review?.use}, refused whole): ${JSON.stringify({ whole: whole.map((v) => (v.ok ? 'ok' : v.rule)), byName })}`,
          );
        continue;
      }
      // The `*` of TABLES, PARTITIONS and STATISTICS holds figures refused where rows are separated
      // (status-counters.ts): a column of names is read.
      const what = schema === 'information_schema' ? (FIGURE_TABLES[name.toLowerCase()] ?? '*') : '*';
      const sql = `SELECT ${what} FROM ${schema}.\`${name}\``;
      const unqualified = { database: schema };
      const verdicts = {
        plain: checkStatement(sql, plain).ok,
        writable: checkStatement(sql, writable).ok,
        separated: checkStatement(sql, separated).ok,
        opened: checkStatement(`SELECT * FROM \`${name}\``, { ...plain, ...unqualified }).ok,
        openedSeparated: checkStatement(`SELECT ${what} FROM \`${name}\``, { ...separated, ...unqualified }).ok,
        shown: checkStatement(`SHOW ${name}`, plain).ok,
      };
      const expected =
        review?.use === 'nowhere'
          ? !verdicts.plain && !verdicts.writable && !verdicts.opened && (schema !== 'information_schema' || !verdicts.shown)
          : review?.use === 'unseparated'
            ? !verdicts.separated && !verdicts.openedSeparated
            : verdicts.separated && verdicts.openedSeparated && verdicts.plain;
      if (!expected) wrong.push(`${name} (${review?.use}): ${JSON.stringify(verdicts)}`);
    }
    expect(wrong).toEqual([]);
  });

  test('every counting information_schema table is refused where rows are separated, or reviewed', async () => {
    const unjudged = (await namesOf('information_schema'))
      .filter((name) => COUNTING.test(name.toUpperCase()) && !(name.toUpperCase() in NOT_COUNTERS))
      .filter((name) => checkStatement(`SELECT * FROM information_schema.${name}`, separated).ok);
    expect(unjudged, 'information_schema tables to refuse or review here').toEqual([]);
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
