import { describe, expect, it, vi } from 'vitest';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';

const available = await serverAvailable('postgres');
// Creating and dropping a database waits for every session of the server to take a barrier.
vi.setConfig({ hookTimeout: 300_000 });
const TAG = `fix_domaincasts_rdc_${process.pid}`;

/**
 * A person's explicit cast between two built-in types (int4 to text, bool to money), which the
 * server looks up for a cast to a domain over the target, an array of that domain or a domain
 * over the target's array: find_coercion_pathway takes a domain's base type and an array's
 * element type. The walk follows the cast from the domain, wherever it is named.
 */
const OBJECTS = [
  'CREATE SCHEMA app',
  'CREATE TABLE app.orders (id int, customer_id int, item text)',
  'CREATE FUNCTION app.label(int) RETURNS text LANGUAGE sql STABLE SECURITY DEFINER AS $$ SELECT item FROM app.orders WHERE id = $1 $$',
  'CREATE CAST (int4 AS text) WITH FUNCTION app.label(int)',
  'CREATE DOMAIN app.td AS text',
  'CREATE DOMAIN app.td2 AS app.td',
  'CREATE DOMAIN app.tda AS text[]',
  'CREATE FUNCTION app.price(bool) RETURNS money LANGUAGE sql STABLE SECURITY DEFINER AS $$ SELECT 1::money $$',
  'CREATE CAST (bool AS money) WITH FUNCTION app.price(bool)',
  'CREATE DOMAIN app.d AS money',
  'CREATE FUNCTION app.via_sql(i int) RETURNS text LANGUAGE sql AS $$ SELECT i::app.td $$',
  'CREATE FUNCTION app.via_plpgsql(i int) RETURNS text LANGUAGE plpgsql AS $$ DECLARE r app.td; BEGIN r := CAST(i AS app.td); RETURN r; END $$',
  'CREATE TABLE app.plain (id int, v text)',
  'SET jit = off',
];

describe.skipIf(!available)(
  "PostgreSQL resolve step: a person's cast between built-in types reached through a domain",
  { timeout: 180_000 },
  () => {
    const { db, answer } = resolveScratch(TAG, OBJECTS);

    const refs = (extra: Partial<StatementReferences>): StatementReferences => ({
      relations: [],
      functions: [],
      operators: [],
      readOnly: true,
      ...extra,
    });

    it.each([
      ['a domain over the target', refs({ types: ['td'], functions: ['generate_series'] })],
      ['a domain over a domain over the target', refs({ types: ['td2'] })],
      ['a domain over the target array', refs({ types: ['tda'] })],
      ["the target's array type by its own name", refs({ types: ['_text'] })],
      ['a domain over money', refs({ types: ['d'] })],
      ['a SQL body that casts to the domain', refs({ functions: ['via_sql'] })],
      ['a PL/pgSQL body that casts to the domain', refs({ functions: ['via_plpgsql'] })],
    ])('refuses %s: the cast function is SECURITY DEFINER', async (_what, references) => {
      expect(await answer(references, 'first')).toBe('further');
      expect(await answer(references, 'walk')).toMatch(/calls (label|price)\(\), a SECURITY DEFINER function/);
    });

    it('finds nothing for built-in types the cast does not touch', async () => {
      expect(await answer(refs({ types: ['int4'], relations: ['"app"."plain"'] }), 'walk')).toBe('nothing');
      expect(await answer(refs({ types: ['numeric'] }), 'walk')).toBe('nothing');
    });

    it('the server runs the cast function for a cast to the domain', async () => {
      await db().query("INSERT INTO app.orders VALUES (3, 2, 'other-item')");
      const r = await db().query('SELECT 3::app.td AS v, (ARRAY[3]::app.td[])[1] AS a, ARRAY[3]::app.tda AS b');
      expect(r.rows[0]).toMatchObject({ v: 'other-item', a: 'other-item' });
    });
  },
);
