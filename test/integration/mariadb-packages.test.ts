/**
 * Package routines (MariaDB, created under sql_mode ORACLE) called by a qualified name, against
 * the live server: a function and a procedure of a package that take a lock (refused on a
 * read-only call). The server runs them as `db.pkg.f()` and `CALL db.pkg.p()`, and as `pkg.f()`
 * where the text is parsed under sql_mode ORACLE (a session in that mode, a body created in it);
 * under the default mode `pkg.f()` names database pkg. Each call is refused before it runs, in
 * the statement and inside an INVOKER routine's body, while a stored function outside any package
 * still runs.
 */
import { describe, expect, test } from 'vitest';
import { serverAvailable } from '../helpers/engines.js';
import { mariadbScratch } from '../helpers/mariadb-scratch.js';

const available = await serverAvailable('mysql');

describe.skipIf(!available)('package routines called by a qualified name, on the live MariaDB', () => {
  const {
    name: db,
    admin,
    viaDriver: viaHanactl,
  } = mariadbScratch(
    'mdbp',
    async (root) => {
      await root.query(
        [
          "SET sql_mode = 'ORACLE'",
          'CREATE PACKAGE pk AS FUNCTION f RETURN INT; PROCEDURE p; END',
          `CREATE PACKAGE BODY pk AS FUNCTION f RETURN INT AS BEGIN RETURN GET_LOCK('${db}', 0); END; PROCEDURE p AS BEGIN DO GET_LOCK('${db}', 0); END; END`,
          'CREATE FUNCTION w_two RETURN INT SQL SECURITY INVOKER AS BEGIN RETURN pk.f(); END',
          'SET sql_mode = DEFAULT',
          'CREATE FUNCTION plain() RETURNS INT RETURN 7',
          `CREATE FUNCTION w_three() RETURNS INT SQL SECURITY INVOKER RETURN ${db}.pk.f()`,
          'CREATE PROCEDURE w_call() SQL SECURITY INVOKER CALL pk.p()',
        ].join(';\n'),
      );
    },
    { refusalMessages: true, setUpTimeoutMs: 60_000 },
  );

  test('the server runs the package function by its three-part name, and pkg.f() under sql_mode ORACLE', async () => {
    const [rows] = await admin().query(`SELECT ${db}.pk.f() AS a, (SELECT ${db}.PK.F()) AS b`);
    expect(rows).toEqual([{ a: 1, b: 1 }]);
    const [oracle] = await admin().query("SET sql_mode = 'ORACLE'; SELECT pk.f() AS a FROM DUAL; SET sql_mode = DEFAULT");
    expect((oracle as unknown[])[1]).toEqual([{ a: 1 }]);
    const [two] = await admin().query('SELECT w_two() AS a');
    expect(two).toEqual([{ a: 1 }]);
  });

  test('each call that may name a member of the package is refused, naming the package', async () => {
    for (const sql of [
      `SELECT ${db}.pk.f() AS r`,
      `SELECT \`${db}\`.\`PK\`.\`f\`() AS r`,
      `SELECT (SELECT ${db} . pk . f()) AS r`,
      `CALL ${db}.pk.p()`,
      'SELECT pk.f() AS r',
      'CALL pk.p',
    ])
      expect(await viaHanactl(sql), sql).toMatch(new RegExp(`^refused: .*the package ${db}\\.pk`));
  });

  test('a call of a package member inside a routine body is refused too', async () => {
    expect(await viaHanactl('SELECT w_three() AS r')).toMatch(/^refused: .*the package .*reached through/);
    expect(await viaHanactl('CALL w_call()')).toMatch(/^refused: .*the package /);
    // A body written under sql_mode ORACLE (AS BEGIN ...) is refused as a whole.
    expect(await viaHanactl('SELECT w_two() AS r')).toMatch(/^refused: /);
  });

  test('a stored function outside any package still runs', async () => {
    expect(await viaHanactl(`SELECT plain() AS a, ${db}.plain() AS b`)).toBe('ran: {"a":7,"b":7}');
  });
});
