import { describe, expect, it } from 'vitest';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_rcasts_${process.pid}`;

/** A body that ends another session's statement (pid 0 is none: harmless here, refused by name). */
const CANCEL = 'PERFORM pg_catalog.pg_cancel_backend(0);';

const OBJECTS = [
  'CREATE SCHEMA app',
  // A person's enum with an explicit cast to json, and one to jsonb, whose functions end another session.
  "CREATE TYPE app.status AS ENUM ('new', 'paid')",
  `CREATE FUNCTION app.status_json(x app.status) RETURNS json LANGUAGE plpgsql AS $$ BEGIN ${CANCEL} RETURN pg_catalog.to_json(x::text); END $$`,
  'CREATE CAST (app.status AS json) WITH FUNCTION app.status_json(app.status)',
  "CREATE TYPE app.grade AS ENUM ('a', 'b')",
  `CREATE FUNCTION app.grade_jsonb(x app.grade) RETURNS jsonb LANGUAGE plpgsql AS $$ BEGIN ${CANCEL} RETURN pg_catalog.to_jsonb(x::text); END $$`,
  'CREATE CAST (app.grade AS jsonb) WITH FUNCTION app.grade_jsonb(app.grade)',
  // A cast into a person's type from a built-in one, explicit too.
  "CREATE TYPE app.level AS ENUM ('low', 'high')",
  `CREATE FUNCTION app.level_of(x int) RETURNS app.level LANGUAGE plpgsql AS $$ BEGIN ${CANCEL} RETURN 'low'; END $$`,
  'CREATE CAST (int AS app.level) WITH FUNCTION app.level_of(int)',
  // A SECURITY DEFINER cast function in SQL.
  "CREATE TYPE app.tier AS ENUM ('gold', 'silver')",
  "CREATE FUNCTION app.tier_json(x app.tier) RETURNS json LANGUAGE sql SECURITY DEFINER AS 'SELECT pg_catalog.to_json(x::text)'",
  'CREATE CAST (app.tier AS json) WITH FUNCTION app.tier_json(app.tier)',
  // Where the type sits: a column, a domain, a range, an array, a composite, a view.
  'CREATE TABLE app.shipments (id int, st app.status)',
  "INSERT INTO app.shipments VALUES (1, 'new')",
  'CREATE TABLE app.graded (id int, g app.grade)',
  'CREATE TABLE app.levels (id int, l app.level)',
  'CREATE TABLE app.tiers (id int, t app.tier)',
  'CREATE DOMAIN app.status_d AS app.status',
  'CREATE TABLE app.dom (id int, d app.status_d)',
  'CREATE FUNCTION app.status_diff(a app.status, b app.status) RETURNS float8 LANGUAGE sql IMMUTABLE AS $$ SELECT 0::float8 $$',
  'CREATE TYPE app.status_range AS RANGE (subtype = app.status)',
  'CREATE TABLE app.ranged (id int, r app.status_range)',
  'CREATE TABLE app.arr (id int, a app.status[])',
  'CREATE TYPE app.pair AS (n int, st app.status)',
  'CREATE TABLE app.comp (id int, p app.pair)',
  'CREATE VIEW app.shipments_v AS SELECT id, st FROM app.shipments',
  'CREATE VIEW app.shipments_text AS SELECT id, st::text AS st FROM app.shipments',
  // Controls: a person's type with no cast, and built-in types only.
  "CREATE TYPE app.plain_enum AS ENUM ('x', 'y')",
  // An I/O conversion cast runs the type's own output and input functions: nothing else to follow.
  'CREATE CAST (app.plain_enum AS json) WITH INOUT',
  'CREATE TABLE app.plain_typed (id int, e app.plain_enum, a app.plain_enum[])',
  'CREATE TABLE app.builtin (id int, v text, j jsonb)',
  'CREATE VIEW app.builtin_v AS SELECT id, v FROM app.builtin',
  'SET jit = off',
];

describe.skipIf(!available)("PostgreSQL resolve step: every cast of a person's type", { timeout: 180_000 }, () => {
  const { db, answer } = resolveScratch(TAG, OBJECTS);

  const refs = (relations: string[], functions: string[] = [], extra: Partial<StatementReferences> = {}): StatementReferences => ({
    relations: relations.map((r) => `"app"."${r}"`),
    functions,
    operators: [],
    readOnly: true,
    ...extra,
  });

  it.each([
    ['to_json of a column', refs(['shipments'], ['to_json'])],
    ['to_jsonb of a column', refs(['graded'], ['to_jsonb'])],
    ['row_to_json of a row', refs(['shipments'], ['row_to_json'])],
    ['json_agg', refs(['shipments'], ['json_agg'])],
    ['jsonb_agg', refs(['graded'], ['jsonb_agg'])],
    ['json_build_object', refs(['shipments'], ['json_build_object'])],
    ['json_build_array', refs(['shipments'], ['json_build_array'])],
    ['array_to_json(array_agg(..))', refs(['shipments'], ['array_to_json', 'array_agg'])],
    ['a view over the column', refs(['shipments_v'], ['to_json'])],
    ['a view that shows the column as text', refs(['shipments_text'], ['to_json'])],
    ['a domain over the type', refs(['dom'], ['to_json'])],
    ['a range of the type', refs(['ranged'], ['to_json'])],
    ['an array of the type', refs(['arr'], ['to_json'])],
    ['a composite with a field of the type', refs(['comp'], ['to_json'])],
    ['an explicit cast into the type from a built-in', refs(['levels'], ['to_json'])],
    ['the type named alone', refs([], [], { types: ['status'] })],
    ['a domain named alone', refs([], [], { types: ['status_d'] })],
  ])('refuses %s: the cast function ends another session', async (_what, references) => {
    expect(await answer(references, 'first')).toBe('further');
    expect(await answer(references, 'walk')).toMatch(/calls pg_cancel_backend\(\)/);
  });

  it('refuses a SECURITY DEFINER cast function of a column type', async () => {
    expect(await answer(refs(['tiers'], ['to_json']), 'first')).toBe('further');
    expect(await answer(refs(['tiers'], ['to_json']), 'walk')).toMatch(/tier_json.*SECURITY DEFINER/);
  });

  it("finds nothing for a person's type with no cast or an I/O conversion cast, nor for built-in types", async () => {
    expect(await answer(refs(['plain_typed'], ['to_json', 'json_agg']), 'walk')).toBe('nothing');
    expect(await answer(refs(['builtin'], ['to_json', 'row_to_json']), 'first')).toBe('nothing');
    expect(await answer(refs(['builtin_v'], ['to_json']), 'view')).toBe('nothing');
    expect(await answer(refs(['builtin'], ['to_jsonb']), 'walk')).toBe('nothing');
  });

  it('the server itself runs the cast function for to_json of the column', async () => {
    const r = await db().query('SELECT pg_catalog.to_json(st)::text AS j FROM app.shipments');
    expect(r?.rows[0].j).toBe('"new"');
    const calls = await db().query("SELECT pg_catalog.to_json('new'::app.status)::text AS j");
    expect(calls?.rows[0].j).toBe('"new"');
  });
});
