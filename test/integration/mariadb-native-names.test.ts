/**
 * The names the routine judgement once took for MariaDB's native functions, against the live
 * server: for every name of MARIADB_BUILTINS a stored SQL SECURITY DEFINER function of that name
 * (one database), whose body takes a lock (refused on a read-only call) and returns a marker. Each
 * name is called as name(...) with 0 to 3 arguments, on the server directly (which function runs:
 * the marker, or the stored function's wrong-arguments error, says the stored one) and as a
 * read-only call through the driver: wherever the server runs the stored function, the call is
 * refused before it runs, written in the statement and inside an INVOKER routine's body.
 */
import { describe, expect, test } from 'vitest';
import { MARIADB_BUILTINS } from '../../daemon/engines/mysql/mysql-builtins.js';
import { serverAvailable } from '../helpers/engines.js';
import { mariadbScratch } from '../helpers/mariadb-scratch.js';

const available = await serverAvailable('mysql');
const MARKER = 424242;
/** ER_SP_WRONG_NO_OF_ARGS: the server chose the stored function, called with another arity. */
const STORED_ARITY = 1318;
const NAMES = [...MARIADB_BUILTINS].sort();
const call = (name: string, arity: number): string => `${name}(${Array.from({ length: arity }, () => 'NULL').join(', ')})`;

describe.skipIf(!available)('a stored function named as a native one, on the live MariaDB', () => {
  /** name(...) the server runs as the stored function. */
  const stored: { name: string; arity: number }[] = [];
  const { name: db, viaDriver: viaHanactl } = mariadbScratch('mdbn', async (root) => {
    const body = `BEGIN DO GET_LOCK('${db}', 0); DO RELEASE_LOCK('${db}'); RETURN ${MARKER}; END`;
    await root.query(NAMES.map((name) => `CREATE FUNCTION \`${name}\`(a INT) RETURNS INT SQL SECURITY DEFINER ${body}`).join(';\n'));
    // What the server runs: the stored function (its marker, or its wrong-arguments error) or not.
    for (const name of NAMES)
      for (let arity = 0; arity <= 3; arity++) {
        const ran = await root.query({ sql: `SELECT ${call(name, arity)} AS r`, timeout: 5000 }).then(
          ([rows]) => Number((rows as { r: unknown }[])[0]?.r) === MARKER,
          (error: { errno?: number }) => error.errno === STORED_ARITY,
        );
        if (ran) stored.push({ name, arity });
      }
    // An INVOKER routine calling each of them, as written.
    if (stored.length > 0)
      await root.query(
        stored
          .map(({ name, arity }, k) => `CREATE FUNCTION wrap_${k}() RETURNS INT SQL SECURITY INVOKER RETURN ${call(name, arity)}`)
          .join(';\n'),
      );
  });

  test('the server runs some of them as the stored function (the report: trunc, mbrcoveredby, point())', () => {
    const shown = stored.map(({ name, arity }) => `${name}/${arity}`);
    expect(shown).toEqual(expect.arrayContaining(['trunc/1', 'mbrcoveredby/1', 'point/0']));
  });

  test('each one the server runs as the stored function is refused, called in the statement', async () => {
    const missed: string[] = [];
    for (const { name, arity } of stored) {
      const outcome = await viaHanactl(`SELECT ${call(name, arity)} AS r`);
      if (outcome !== 'refused') missed.push(`${call(name, arity)}: ${outcome}`);
    }
    expect(missed).toEqual([]);
  }, 120_000);

  test('each one the server runs as the stored function is refused, called in an INVOKER body', async () => {
    const missed: string[] = [];
    for (const [k, { name, arity }] of stored.entries()) {
      const outcome = await viaHanactl(`SELECT wrap_${k}() AS r`);
      if (outcome !== 'refused') missed.push(`${call(name, arity)}: ${outcome}`);
    }
    expect(missed).toEqual([]);
  }, 120_000);

  test('a stored function of a native name is judged even where the server calls the native one', async () => {
    expect(stored.some(({ name }) => name === 'concat')).toBe(false);
    expect(await viaHanactl(`SELECT CONCAT('a', 'b') AS r`)).toBe('refused');
  });
});
