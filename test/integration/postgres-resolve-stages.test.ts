/**
 * The resolve step's `view` stage (postgres-settled.ts) lets a view over ordinary tables and
 * built-ins through without the walk, and asks to go further for every view the walk would go
 * on from: each object below is one route the walk follows out of a view.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FURTHER_MARKER, type ResolveStage, resolveStep } from '../../daemon/engines/postgres/postgres-resolve.js';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_stages_${process.pid}`;

const OBJECTS = [
  'CREATE TABLE public.orders (id int, item text)',
  'CREATE VIEW public.v_plain AS SELECT id, upper(item) AS item FROM public.orders WHERE id = 7',
  "CREATE VIEW public.v_catalog AS SELECT relname FROM pg_catalog.pg_class WHERE relkind = 'r'",
  'CREATE MATERIALIZED VIEW public.m_plain AS SELECT id FROM public.orders',
  'CREATE VIEW public.v_acts AS SELECT pid, query FROM pg_catalog.pg_stat_activity',
  'CREATE VIEW public.v_authid AS SELECT count(*) AS n FROM pg_catalog.pg_authid',
  'CREATE VIEW public.v_v AS SELECT id FROM public.v_plain',
  "CREATE FUNCTION public.twice(a int) RETURNS int LANGUAGE sql AS 'SELECT a * 2'",
  "CREATE FUNCTION public.plus(a int, b int) RETURNS int LANGUAGE sql AS 'SELECT a + b'",
  'CREATE VIEW public.v_fn AS SELECT public.twice(id) AS n FROM public.orders',
  'CREATE OPERATOR public.%%% (leftarg = int, rightarg = int, function = public.plus)',
  'CREATE VIEW public.v_op AS SELECT 1 OPERATOR(public.%%%) 2 AS x',
  'CREATE DOMAIN public.small AS int CHECK (VALUE < 100)',
  'CREATE TABLE public.typed (n public.small)',
  'CREATE VIEW public.v_typed AS SELECT 1 AS one FROM public.typed',
  'CREATE VIEW public.v_cast AS SELECT 1::public.small AS n',
  'CREATE TABLE public.parent (n int) PARTITION BY RANGE (n)',
  'CREATE TABLE public.child PARTITION OF public.parent FOR VALUES FROM (0) TO (10)',
  'CREATE VIEW public.v_parent AS SELECT n FROM public.parent',
  'CREATE SCHEMA hanactl',
  'CREATE TABLE hanactl.context_keys (id text PRIMARY KEY, inner_pad bytea NOT NULL, outer_pad bytea NOT NULL)',
  'CREATE VIEW public.v_keys AS SELECT id FROM hanactl.context_keys',
  'CREATE VIEW public.v_scans AS SELECT pg_catalog.pg_stat_get_numscans(c.oid) AS n FROM pg_catalog.pg_class c',
  'CREATE EXTENSION postgres_fdw',
  "CREATE SERVER loop FOREIGN DATA WRAPPER postgres_fdw OPTIONS (dbname 'postgres')",
  'CREATE FOREIGN TABLE public.ft (n int) SERVER loop',
  'CREATE VIEW public.v_ft AS SELECT n FROM public.ft',
];

describe.skipIf(!available)('PostgreSQL resolve stages', () => {
  let scratch: ScratchPgDatabase | undefined;
  let db: pg.Client | undefined;

  beforeAll(async () => {
    scratch = await scratchPgDatabase(TAG, OBJECTS);
    db = scratch.db;
  });

  afterAll(async () => {
    await scratch?.drop();
  });

  /** What the step at `stage` answers for a statement naming `relation`: settled, or further. */
  async function verdict(relation: string, stage: ResolveStage, extra: Partial<StatementReferences> = {}): Promise<string> {
    const step = resolveStep({ relations: [`"public"."${relation}"`], functions: [], operators: ['='], ...extra }, stage);
    if (!step || !db) throw new Error('no step');
    try {
      await db.query(step.text, step.values as string[]);
      return 'settled';
    } catch (err) {
      if ((err as Error).message.includes(FURTHER_MARKER)) return 'further';
      throw err;
    }
  }

  it('settles a view over ordinary tables, catalogs that are not refused, and built-ins, which the first check sends on', async () => {
    for (const view of ['v_plain', 'v_catalog', 'm_plain']) {
      expect([view, await verdict(view, 'first')]).toEqual([view, 'further']);
      expect([view, await verdict(view, 'view')]).toEqual([view, 'settled']);
    }
    expect(await verdict('orders', 'first')).toBe('settled');
  });

  it.each([
    ['v_acts', 'a refused catalog'],
    ['v_authid', 'the role catalog initdb pins'],
    ['v_v', 'another view'],
    ['v_fn', 'a function created since initdb'],
    ['v_op', 'an operator created since initdb'],
    ['v_typed', 'a table with a column of a domain'],
    ['v_cast', 'a cast to a domain'],
    ['v_parent', 'a partitioned table'],
    ['v_keys', "hanactl's key table"],
    ['v_ft', 'a foreign table'],
  ])('sends %s (over %s) on to the walk', async (view) => {
    expect(await verdict(view, 'view')).toBe('further');
  });

  it('sends a view that calls a statistics function on to the walk where rows are separated', async () => {
    expect(await verdict('v_scans', 'view', { separated: true })).toBe('further');
    expect(await verdict('v_scans', 'view')).toBe('settled');
  });
});
