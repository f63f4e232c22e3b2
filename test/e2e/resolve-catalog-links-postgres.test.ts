import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { catalogLinkObjects } from '../helpers/catalog-links-postgres.js';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { VictimSession } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_links_${process.pid}`;

/** Every link, the estimator's statistics, an enum's default class, and rows to read in app.plain. */
const OBJECTS = catalogLinkObjects({ analyze: true, enumClass: true, plainRows: true });

// Each refusal below comes from the full walk, which a busy server takes seconds to plan.
describe.skipIf(!available)('the resolve step follows the catalog links the planner and executor take', { timeout: 300_000 }, () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    await home.ok(['add', '--no-test', '--no-password', 'pglinks', scratch.url]);
    shim = await startShim(home.env, ['--connection', 'pglinks']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ['run_query', 'SELECT NOT (id OPERATOR(app.<<<) 2) AS n FROM app.t LIMIT 1', /operator <<< calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.t WHERE 50 OPERATOR(app.<~) id', /operator <~ calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.t a JOIN app.t b ON a.id OPERATOR(app.=#) b.id', /operator =# calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT id FROM app.t ORDER BY id USING OPERATOR(app.<^) LIMIT 2', /operator <\^ calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.t a JOIN app.t b ON a.id OPERATOR(app.=%) b.id', /operator =% calls pg_cancel_backend\(\)/],
    // The range's constructor is a function and the type itself by call syntax: the walk meets the type first.
    ['run_query', 'SELECT app.irange(1, 5) AS r', /(irange\(\)|type irange) calls pg_cancel_backend\(\)/],
    ['run_query', "SELECT '[1,5)'::app.irange AS r", /type irange calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.pt WHERE id = 5', /pt.* calls pg_cancel_backend\(\)/],
    ['explain_query', 'SELECT * FROM app.pe WHERE id = 5', /pe.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.par WHERE id = 5', /par.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.t3 WHERE id = 5', /t3.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.v3 WHERE id = 5', /v3.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.t5', /t5.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT * FROM app.t4', /t4.* calls pg_cancel_backend\(\)/],
    ['run_query', 'SELECT DISTINCT m FROM app.feel', /feel.* calls pg_cancel_backend\(\)/],
  ])('%s refuses %s', async (tool, sql, message) => {
    const result = await shim.call(tool, { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: /);
    expect(textOf(result)).toMatch(message);
  });

  it.each([
    ['t4', /t4.* calls pg_cancel_backend\(\)/],
    ['t3', /t3.* calls pg_cancel_backend\(\)/],
    ['pt', /pt.* calls pg_cancel_backend\(\)/],
  ])('sample_rows refuses %s', async (table, message) => {
    const result = await shim.call('sample_rows', { schema: 'app', table });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('still answers reads of a table whose index, CHECK and statistics use only built-ins, and of a plain table', async () => {
    for (const [sql, rows] of [
      ['SELECT id, v FROM app.plain WHERE id = 20', [{ id: 20, v: 200 }]],
      ['SELECT id FROM app.t WHERE id = 2', [{ id: 2 }]],
      ['SELECT id FROM app.t ORDER BY id LIMIT 1', [{ id: 1 }]],
      // NOT over a built-in whose negator is built-in: the planner swaps in <>, which runs nothing of a person's.
      ['SELECT id FROM app.t WHERE NOT (id = 2) ORDER BY id LIMIT 1', [{ id: 1 }]],
    ] as const) {
      const result = await shim.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows });
    }
  });
});

const VICTIM = `${TAG}_victim`;

/** Ends every session of the victim's application name: what the person's operators below run. */
const TERMINATE = `PERFORM pg_catalog.pg_terminate_backend(s.pid) FROM pg_catalog.pg_stat_activity s WHERE s.application_name OPERATOR(pg_catalog.=) '${VICTIM}';`;

/**
 * A person's operator written into a built-in operator's row as its negator or commutator
 * (CREATE OPERATOR fills an empty link of the operator it names; PostgreSQL 15.20 asks for
 * ownership of that operator, which the server's own user has here). The planner swaps the negator
 * in for NOT over the built-in `@>`, and commutes a clause of the built-in `^@`, for a statement
 * that names only the built-in. In a scratch database: pg_operator is per database.
 */
/** Every statement of such a database is walked from both links: the refusal names the first it meets. */
const LINKED_REFUSAL = /Refused: operator (@>|\^@) (reads pg_stat_activity|calls pg_terminate_backend\(\))/;

const LINKED = [
  'CREATE SCHEMA app',
  'CREATE TABLE app.a (v int[], t text)',
  "INSERT INTO app.a VALUES ('{1,2}', 'abc'), ('{3}', 'xyz')",
  'ANALYZE app.a',
  `CREATE FUNCTION app.noisy_fn(anyarray, anyarray) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ${TERMINATE} RETURN false; END $$`,
  'CREATE OPERATOR app.!@> (leftarg = anyarray, rightarg = anyarray, function = app.noisy_fn, negator = OPERATOR(pg_catalog.@>))',
  `CREATE FUNCTION app.noisy_t(text, text) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN ${TERMINATE} RETURN false; END $$`,
  'CREATE OPERATOR app.@^ (leftarg = text, rightarg = text, function = app.noisy_t, commutator = OPERATOR(pg_catalog.^@))',
];

describe.skipIf(!available)(
  "the resolve step follows a person's operator a built-in names as its negator or commutator",
  { timeout: 300_000 },
  () => {
    const home = new TestHome();
    let scratch: ScratchPgDatabase | undefined;
    let shim: ShimHandle;
    let victim: VictimSession | undefined;

    beforeAll(async () => {
      scratch = await scratchPgDatabase(`${TAG}_b`, LINKED);
      await home.ok(['add', '--no-test', '--no-password', 'pglinked', scratch.url]);
      shim = await startShim(home.env, ['--connection', 'pglinked']);
      victim = await VictimSession.open(scratch.url, VICTIM);
    });

    afterAll(async () => {
      await victim?.end();
      await shim?.close();
      await home.dispose();
      await scratch?.drop();
    });

    it.each([
      ['run_query', 'SELECT v FROM app.a WHERE NOT (v @> ARRAY[2])', LINKED_REFUSAL],
      ['explain_query', 'SELECT v FROM app.a WHERE NOT (v @> ARRAY[2])', LINKED_REFUSAL],
      ['run_query', "SELECT t FROM app.a WHERE 'ab' ^@ t", LINKED_REFUSAL],
      ['run_query', "SELECT t FROM app.a WHERE t ^@ 'ab'", LINKED_REFUSAL],
    ])('%s refuses %s, and the other session lives', async (tool, sql, message) => {
      const result = await shim.call(tool, { sql });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(/Refused: /);
      expect(textOf(result)).toMatch(message);
      await victim?.alive();
    });

    it('answers again once the operators are dropped, which clears the built-in rows', async () => {
      await scratch?.db.query('DROP OPERATOR app.!@> (anyarray, anyarray)');
      await scratch?.db.query('DROP OPERATOR app.@^ (text, text)');
      const result = await shim.call('run_query', { sql: "SELECT v FROM app.a WHERE NOT (v @> ARRAY[2]) AND t ^@ 'x'" });
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ v: [3] }] });
      await victim?.alive();
    });
  },
);
