import { describe, expect, it } from 'vitest';
import { filtersRows } from '../../daemon/engines/postgres/postgres-context-barrier.js';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_rrel_${process.pid}`;

const OBJECTS = [
  'CREATE TABLE public.orders (id int, item text)',
  'CREATE VIEW public.orders_all AS SELECT id, item FROM public.orders',
  "CREATE FUNCTION public.export_sql(t regclass) RETURNS xml LANGUAGE sql STABLE AS $$ SELECT table_to_xml(t, true, false, '') $$",
  "CREATE FUNCTION public.export_plpgsql(t regclass) RETURNS xml LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN table_to_xml(t, true, false, ''); END $$",
  "CREATE FUNCTION public.export_spaced(t regclass) RETURNS xml LANGUAGE sql STABLE AS $$ SELECT pg_catalog.TABLE_TO_XMLSCHEMA /* c */ (t, true, false, '') $$",
  "CREATE FUNCTION public.export_atomic(t regclass) RETURNS xml LANGUAGE sql STABLE BEGIN ATOMIC SELECT table_to_xml(t, true, false, ''); END",
  "CREATE VIEW public.xml_all WITH (security_barrier) AS SELECT table_to_xml(to_regclass('orders_all'), true, false, '') AS d",
  "CREATE VIEW public.xml_cast AS SELECT table_to_xml('orders_all'::text::regclass, true, false, '') AS d",
  "CREATE VIEW public.table_exports AS SELECT c.relname, table_to_xml(c.oid::regclass, true, false, '') AS doc FROM pg_catalog.pg_class c",
  "CREATE VIEW public.xml_orders AS SELECT table_to_xml('public.orders', true, false, '') AS d",
  "CREATE FUNCTION public.export_orders() RETURNS xml LANGUAGE sql STABLE AS $$ SELECT table_to_xml('public.orders', true, false, '') $$",
  "CREATE FUNCTION public.export_orders_atomic() RETURNS xml LANGUAGE sql STABLE BEGIN ATOMIC SELECT table_to_xml('public.orders', true, false, ''); END",
  'CREATE VIEW public.no_from AS SELECT 1 AS d',
  'CREATE VIEW public.no_from_where AS SELECT 1 AS d WHERE pg_catalog.random() > 0.5',
  'CREATE VIEW public.no_from_limit AS SELECT 1 AS d LIMIT 0',
  'CREATE VIEW public.no_from_sublink AS SELECT (SELECT item FROM public.orders WHERE id = 1) AS d',
  'CREATE VIEW public.plain_orders AS SELECT id, item FROM public.orders',
  'CREATE VIEW public.where_orders AS SELECT id, item FROM public.orders WHERE id > 1',
  "CREATE DOMAIN public.exported AS text CHECK (table_to_xml(VALUE::regclass, true, false, '') IS NOT NULL)",
  'CREATE TABLE public.exports (name public.exported)',
  'CREATE DOMAIN public.partition_of AS oid CHECK (pg_catalog.satisfies_hash_partition(VALUE, 2, 0, 1))',
  'CREATE TABLE public.partitions (parent public.partition_of)',
];

const RUN_TIME = /hands table_to_xml \(or its family\) a relation chosen only when it runs.*runs text this statement does not show/;

// The walk is planned on every call, which on a busy server takes seconds.
describe.skipIf(!available)('PostgreSQL resolve step: a relation handed to table_to_xml at run time', { timeout: 180_000 }, () => {
  const { answer, db } = resolveScratch(TAG, OBJECTS);

  const fn = (name: string): StatementReferences => ({ relations: [], functions: [name] });
  const view = (name: string): StatementReferences => ({ relations: [`"public"."${name}"`], functions: [] });

  it.each(['export_sql', 'export_plpgsql', 'export_spaced', 'export_atomic'])(
    'refuses %s, which hands table_to_xml its argument',
    async (name) => {
      expect(await answer(fn(name), 'walk')).toMatch(RUN_TIME);
      expect(await answer({ ...fn(name), readOnly: true }, 'walk')).toMatch(RUN_TIME);
    },
  );

  it.each(['xml_all', 'xml_cast', 'table_exports'])('refuses the view %s, whose relation is an expression', async (name) => {
    expect(await answer(view(name), 'view')).toBe('further');
    expect(await answer(view(name), 'walk')).toMatch(RUN_TIME);
  });

  it('names the domain whose CHECK constraint hands the relation over', async () => {
    expect(await answer(view('exports'), 'walk')).toMatch(/^Refused: exports calls exported, which hands table_to_xml/);
    expect(await answer(view('partitions'), 'walk')).toMatch(
      /^Refused: partitions calls partition_of, which hands a built-in that runs a relation's own code/,
    );
  });

  it('still answers a view and functions that name the table as a constant', async () => {
    expect(await answer(view('xml_orders'), 'walk')).toBe('nothing');
    expect(await answer(fn('export_orders'), 'walk')).toBe('nothing');
    expect(await answer(fn('export_orders_atomic'), 'walk')).toBe('nothing');
  });

  it.each([
    ['no_from', false],
    ['plain_orders', false],
    ['no_from_where', true],
    ['no_from_limit', true],
    ['no_from_sublink', true],
    ['where_orders', true],
  ])('judges whether the view %s filters rows: %s', async (name, filters) => {
    const { rows } = await db().query(
      `SELECT ${filtersRows('w.ev_action::pg_catalog.text')} AS f FROM pg_catalog.pg_rewrite w WHERE w.ev_class OPERATOR(pg_catalog.=) $1::pg_catalog.regclass`,
      [`public.${name}`],
    );
    expect(rows).toEqual([{ f: filters }]);
  });
});
