import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_attrs_${process.pid}`;

/**
 * Attribute notation ((x).f is f(x)) and built-ins a person's code reaches, judged with the
 * connection's own mode: what only a writable connection runs (txid_current,
 * gin_clean_pending_list) is refused on a read-only one when a person's view or function reaches
 * it, as it is when called by name.
 */
const OBJECTS = [
  'CREATE TABLE public.orders (id int, item text)',
  "INSERT INTO public.orders VALUES (1, 'apple')",
  "CREATE FUNCTION public.peekd(o public.orders, n int DEFAULT 1) RETURNS text SECURITY DEFINER LANGUAGE sql AS $$ SELECT string_agg(query, ' | ') FROM pg_catalog.pg_stat_activity $$",
  'CREATE TABLE public.gt (a int[])',
  'CREATE INDEX gt_gin ON public.gt USING gin (a) WITH (fastupdate = on)',
  "CREATE VIEW public.v_gin AS SELECT pg_catalog.gin_clean_pending_list('public.gt_gin'::pg_catalog.regclass) AS n",
  'CREATE FUNCTION public.f_txid() RETURNS bigint LANGUAGE sql AS $$ SELECT txid_current() $$',
  'CREATE FUNCTION public.f_txid_atomic() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT pg_catalog.txid_current(); END',
];

describe.skipIf(!available)('run_query judges attribute notation and reached built-ins with the connection mode', () => {
  const home = new TestHome();
  let scratch: ScratchPgDatabase | undefined;
  let readOnly: ShimHandle;
  let writable: ShimHandle;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    await home.ok(['add', '--no-test', '--no-password', 'pgattr', scratch.url]);
    await home.ok(['add', '--no-test', '--no-password', 'pgattrw', scratch.url, '--allow-write']);
    readOnly = await startShim(home.env, ['--connection', 'pgattr']);
    writable = await startShim(home.env, ['--connection', 'pgattrw']);
  });

  afterAll(async () => {
    await readOnly?.close();
    await writable?.close();
    await home.dispose();
    await scratch?.drop();
  });

  it.each([
    ['SELECT (p).pg_terminate_backend FROM (SELECT 0 AS p) s', /pg_terminate_backend\(value\).*attribute notation/],
    ['SELECT ((0).pg_terminate_backend)::text AS k', /pg_terminate_backend\(\) controls the server or other sessions/],
    ['SELECT ((null::int).pg_stat_get_activity).query', /pg_stat_get_activity\(\) shows the text of other sessions' statements/],
    ['SELECT o.peekd FROM orders o', /Refused: peekd\(\) is a SECURITY DEFINER function/],
    ['SELECT * FROM v_gin', /Refused: .*v_gin.* calls gin_clean_pending_list\(\).*read-only/],
    ['SELECT f_txid()', /Refused: f_txid\(\) calls txid_current\(\).*read-only/],
    ['SELECT f_txid_atomic()', /Refused: f_txid_atomic\(\) calls txid_current\(\).*read-only/],
  ])('a read-only connection refuses %s', async (sql, message) => {
    const result = await readOnly.call('run_query', { sql });
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
  });

  it('answers a row value read by attribute notation, and its columns', async () => {
    const result = await readOnly.call('run_query', {
      sql: 'SELECT (o).item, o.id, (s.r).id AS rid FROM orders o, (SELECT o2 AS r FROM orders o2) s',
    });
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(result.structuredContent).toMatchObject({ rows: [{ item: 'apple', id: 1, rid: 1 }] });
  });

  it('a writable connection runs what a writable connection may call, reached through a person code', async () => {
    for (const sql of ['SELECT f_txid() > 0 AS t', 'SELECT n >= 0 AS t FROM v_gin']) {
      const result = await writable.call('run_query', { sql });
      expect(result.isError, `${sql}: ${textOf(result)}`).toBeFalsy();
      expect(result.structuredContent).toMatchObject({ rows: [{ t: true }] });
    }
  });
});
