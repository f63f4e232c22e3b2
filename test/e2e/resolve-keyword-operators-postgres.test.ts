import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { PG_URL, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { VictimSession } from '../helpers/pg-sessions.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_kwops_${process.pid}`;

/** A person's comparison on their enum type that ends the victim's session, then compares as text. */
const evil = (name: string, symbol: string): string[] => [
  `CREATE FUNCTION public.mood_${name}(a app.mood, b app.mood) RETURNS boolean LANGUAGE plpgsql AS $$
   BEGIN
     PERFORM pg_catalog.pg_terminate_backend(v.pid) FROM app.victim v;
     RETURN a::text ${symbol} b::text;
   END $$`,
  `CREATE OPERATOR public.${symbol} (leftarg = app.mood, rightarg = app.mood, function = public.mood_${name})`,
];

/**
 * A DBA's enum type with comparison operators of their own in public: for a column of that type the
 * server picks them over the built-in `anyenum` ones (an exact match), for the operator the
 * statement writes and for the ones a keyword form compares with, unwritten.
 */
const OBJECTS = [
  'CREATE SCHEMA app',
  "CREATE TYPE app.mood AS ENUM ('a', 'b', 'c')",
  'CREATE TABLE app.victim (pid int)',
  ...evil('le', '<='),
  ...evil('ge', '>='),
  ...evil('lt', '<'),
  ...evil('gt', '>'),
  ...evil('eq', '='),
  ...evil('ne', '<>'),
  'CREATE TABLE app.moods (m app.mood)',
  "INSERT INTO app.moods VALUES ('a'), ('b'), ('c')",
];

describe.skipIf(!available)('run_query judges the operators a keyword form compares with, on a read-only connection', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let shim: ShimHandle;
  let victim: VictimSession | undefined;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    await home.ok(['add', '--no-test', '--no-password', 'pgkwops', scratch.url]);
    shim = await startShim(home.env, ['--connection', 'pgkwops']);
  });

  // A fresh session per statement for the operators to end: its error is expected only if one ran.
  beforeEach(async () => {
    const url = new URL(PG_URL);
    url.pathname = `/${TAG}`;
    victim = await VictimSession.open(url.toString());
    await scratch?.db.query('TRUNCATE app.victim');
    await scratch?.db.query('INSERT INTO app.victim VALUES ($1)', [victim.pid]);
  });

  afterEach(async () => {
    await victim?.end();
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    "SELECT m FROM app.moods WHERE m BETWEEN 'a' AND 'b'",
    "SELECT m FROM app.moods WHERE m NOT BETWEEN 'a' AND 'b'",
    "SELECT m FROM app.moods WHERE m BETWEEN SYMMETRIC 'b' AND 'a'",
    "SELECT m FROM app.moods WHERE m NOT BETWEEN SYMMETRIC 'b' AND 'a'",
    "SELECT m IN (SELECT 'a'::app.mood) FROM app.moods",
    "SELECT m FROM app.moods WHERE m NOT IN (SELECT 'a'::app.mood)",
    "SELECT m FROM app.moods WHERE (m, 1) IN (SELECT 'a'::app.mood, 1)",
    'SELECT a.m FROM app.moods a JOIN app.moods b USING (m)',
    'SELECT m FROM app.moods a NATURAL JOIN app.moods b',
    // Refused before too: the named forms of the same comparisons.
    "SELECT m FROM app.moods WHERE m <= 'b'",
    "SELECT NULLIF(m, 'a') FROM app.moods",
    "SELECT m FROM app.moods WHERE m IS DISTINCT FROM 'a'",
    "SELECT m FROM app.moods WHERE m NOT IN ('a', 'b')",
    "SELECT CASE m WHEN 'a' THEN 1 END FROM app.moods",
    "SELECT m FROM app.moods WHERE m < ALL (SELECT 'c'::app.mood)",
  ])('refuses %s, and the other session lives', async (sql) => {
    const result = await shim.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(/Refused: operator (<=|>=|<|>|=|<>) calls pg_terminate_backend\(\)/);
    await expect(victim?.client.query('SELECT 1 AS alive')).resolves.toMatchObject({ rows: [{ alive: 1 }] });
  });

  it.each(["SELECT m FROM app.moods WHERE m BETWEEN 'a' AND 'b'", "SELECT m FROM app.moods WHERE m IN (SELECT 'a'::app.mood)"])(
    'explain_query refuses %s too, and the other session lives',
    async (sql) => {
      const result = await shim.call('explain_query', { sql });
      expect(result.isError, textOf(result)).toBe(true);
      expect(textOf(result)).toMatch(/Refused: operator (<=|>=|=) calls pg_terminate_backend\(\)/);
      await expect(victim?.client.query('SELECT 1 AS alive')).resolves.toMatchObject({ rows: [{ alive: 1 }] });
    },
  );

  it('still answers a read of the table that compares through the type’s default class only', async () => {
    const result = await shim.call('run_query', { sql: 'SELECT m FROM app.moods ORDER BY m DESC' });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ m: 'c' }, { m: 'b' }, { m: 'a' }] });
  });
});
