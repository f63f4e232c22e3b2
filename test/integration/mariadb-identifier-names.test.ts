/**
 * Names the routine judgement takes by MariaDB's own identifier rules, against the live server
 * (sql_lex.cc: MY_LEX_NUMBER_IDENT, MY_LEX_IDENT_SEP). A view and a stored function of each name
 * take a lock (refused on a read-only call): names starting with a digit or `$` in every form the
 * scanner tells apart (number or name), and every word of the server's own keyword list
 * (information_schema.KEYWORDS), which the server reads as a name after a dot. Each statement is
 * run on the server directly first: wherever the server runs the view or function, the same
 * statement through the driver is refused before it runs, written in the statement and inside an
 * INVOKER routine's body.
 */
import { describe, expect, test } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { mariadbScratch } from '../helpers/mariadb-scratch.js';

const available = await serverAvailable('mysql');
/** Every start the scanner tells apart: digits then a name character, number forms, `$`, and their neighbours. */
const FORMS = [
  ...['2v', '1f', '9_', '1e', '1E', '12e', '1e_', '1e5v', '1e5', '1e+5', '123', '0', '0x', '0x1g', '0x1f', '0X1F', '0xg'],
  ...['0b', '0b1z', '0b2', '0b01', '0B1', '$v', '$', '$$', '$1', 'v$', '1ü', '2$', '0e0', '9.5'],
];
/** What each keyword's stored function returns. */
const MARKER = 424242;
const quoted = (name: string): string => `\`${name.replaceAll('`', '``')}\``;

describe.skipIf(!available)("names by MariaDB's identifier rules, on the live MariaDB", () => {
  let keywords: string[] = [];
  const {
    name: db,
    admin,
    viaDriver: viaHanactl,
  } = mariadbScratch('mdbi', async (root) => {
    await root.query(`CREATE FUNCTION lock_it() RETURNS INT RETURN GET_LOCK('${db}', 0)`);
    const [rows] = await root.query('SELECT LOWER(WORD) AS w FROM information_schema.KEYWORDS');
    keywords = (rows as { w: string }[]).map((r) => r.w).filter((w) => /^[a-z_][a-z0-9_]*$/.test(w));
    const names = [...new Set([...FORMS, ...keywords])];
    await root.query(names.map((name) => `CREATE VIEW ${quoted(name)} AS SELECT lock_it() AS l`).join(';\n'));
    // Routine names compare case-insensitively: one function per spelling.
    const functions = [...new Map(FORMS.map((name) => [name.toLowerCase(), name])).values()];
    await root.query(functions.map((name) => `CREATE FUNCTION ${quoted(name)}() RETURNS INT RETURN lock_it()`).join(';\n'));
  });

  /** Whether the server itself runs `sql` (it parses, and the view or function runs). */
  const serverRuns = (sql: string): Promise<boolean> =>
    admin()
      .query({ sql, timeout: 5000 })
      .then(
        () => true,
        () => false,
      );
  /**
   * Of `statements`, those the server runs and hanactl does not refuse, directly and (`inBodies`)
   * inside an INVOKER routine's body; `ran` counts the statements the server runs.
   */
  /** Whether the server runs `sql` and its column r is the keyword functions' MARKER: the stored function ran, no native one. */
  const serverCalls = (sql: string): Promise<boolean> =>
    admin()
      .query({ sql, timeout: 5000 })
      .then(
        ([rows]) => Number((rows as { r?: unknown }[])[0]?.r) === MARKER,
        () => false,
      );
  const missed = async (
    statements: readonly string[],
    inBodies: boolean,
    runs: (sql: string) => Promise<boolean> = serverRuns,
  ): Promise<{ ran: number; missed: string[] }> => {
    const out: string[] = [];
    const ran: string[] = [];
    for (const sql of statements) {
      const outcome = await viaHanactl(sql);
      // Refused or not, the server tells whether the statement runs the view or function at all.
      if (!(await runs(sql))) continue;
      ran.push(sql);
      if (outcome !== 'refused') out.push(`${sql}: ${outcome}`);
    }
    if (!inBodies) return { ran: ran.length, missed: out };
    // The same statements as a routine body holds them, as written.
    const wrapped = ran.map(
      (sql, k) => `CREATE FUNCTION w_${k}() RETURNS INT SQL SECURITY INVOKER RETURN (SELECT COUNT(*) FROM (${sql}) AS x)`,
    );
    await admin().query(`${ran.map((_, k) => `DROP FUNCTION IF EXISTS w_${k}`).join(';\n')};\n${wrapped.join(';\n')}`);
    for (const [k, sql] of ran.entries()) {
      const outcome = await viaHanactl(`SELECT w_${k}() AS r`);
      if (outcome !== 'refused') out.push(`in a body: ${sql}: ${outcome}`);
    }
    return { ran: ran.length, missed: out };
  };

  test('a view or function named as a number might be, in every form the server reads as a name, is refused', async () => {
    const statements = FORMS.flatMap((name) => [
      `SELECT * FROM ${name}`,
      `SELECT * FROM ${db}.${name}`,
      `SELECT * FROM ${db} .${name}`,
      `SELECT (SELECT l FROM ${name}) AS r`,
      `SELECT ${name}() AS r`,
      `SELECT ${db}.${name}() AS r`,
    ]);
    const { ran, missed: left } = await missed(statements, true);
    // The report's forms are among those the server runs.
    for (const sql of [`SELECT * FROM 2v`, `SELECT * FROM 0x1g`, `SELECT * FROM $v`, `SELECT 1f() AS r`, `SELECT $v() AS r`])
      expect(await serverRuns(sql), sql).toBe(true);
    expect(await serverRuns(`SELECT * FROM ${db}.1e5v`)).toBe(true);
    expect(await serverRuns(`SELECT * FROM ${db}.123`)).toBe(true);
    expect(ran).toBeGreaterThan(60);
    expect(left).toEqual([]);
  }, 120_000);

  test("a view named as any of the server's keywords is refused, after a dot and unqualified", async () => {
    const statements = keywords.flatMap((word) => [`SELECT * FROM ${word}`, `SELECT * FROM ${db}.${word}`]);
    const { ran, missed: left } = await missed(statements, false);
    // In a body, the report's words and a few more (a body is read by the same rules).
    const sample = ['order', 'key', 'group', 'index', 'range', 'rows', 'default', 'values', 'lock', 'select', 'union', 'where'];
    left.push(
      ...(
        await missed(
          sample.map((word) => `SELECT ${word}.l FROM ${db}.${word}`),
          true,
        )
      ).missed,
    );
    expect(keywords.length).toBeGreaterThan(600);
    // Every keyword names the view after a dot.
    expect(ran).toBeGreaterThan(keywords.length);
    for (const word of ['order', 'key', 'group', 'index', 'range', 'rows', 'default', 'values', 'lock', 'select'])
      expect(await serverRuns(`SELECT * FROM ${db}.${word}`), word).toBe(true);
    expect(left).toEqual([]);
  }, 300_000);

  test('a body created under sql_mode MSSQL reads [name] as a view: refused', async () => {
    const names = ['order', '2v', 'select', '$v'];
    await admin().query(
      [
        "SET SESSION sql_mode = 'MSSQL'",
        ...names.map((name, k) => `CREATE FUNCTION ms_${k}() RETURNS INT SQL SECURITY INVOKER RETURN (SELECT COUNT(*) FROM [${name}])`),
        'SET SESSION sql_mode = DEFAULT',
      ].join(';\n'),
    );
    for (const k of names.keys()) {
      expect(await serverRuns(`SELECT ms_${k}() AS r`)).toBe(true);
      expect(await viaHanactl(`SELECT ms_${k}() AS r`), names[k]).toBe('refused');
    }
  });

  test("a stored function named as any of the server's keywords is refused wherever the server calls it", async () => {
    // Created here, last: every routine lookup reads mysql.proc whole, so the other tests would pay for them.
    await admin().query(
      keywords.map((word) => `CREATE FUNCTION ${quoted(word)}() RETURNS INT RETURN lock_it() + ${MARKER - 1}`).join(';\n'),
    );
    const statements = keywords.flatMap((word) => [`SELECT ${word}() AS r`, `SELECT ${db}.${word}() AS r`]);
    const { ran, missed: left } = await missed(statements, false, serverCalls);
    // Every keyword calls the stored function when qualified.
    expect(ran).toBeGreaterThan(keywords.length);
    expect(left).toEqual([]);
  }, 300_000);
});
