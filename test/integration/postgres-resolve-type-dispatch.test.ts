import { describe, expect, it } from 'vitest';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';
import { GUARDED_READERS, withOid } from '../helpers/type-dispatch.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_fix_dispatch_walk_${process.pid}`;

const OBJECTS = [
  'CREATE SCHEMA s',
  'CREATE FUNCTION s.stop(v int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_catalog.pg_cancel_backend(0); RETURN true; END $$',
  'CREATE DOMAIN s.guarded AS int CHECK (s.stop(VALUE))',
  ...GUARDED_READERS,
  'CREATE VIEW s.column_v AS SELECT pg_catalog.record_in(t.typname::text::cstring, t.oid, -1)::text AS a FROM pg_catalog.pg_type t',
  'CREATE VIEW s.hash_v AS SELECT pg_catalog.satisfies_hash_partition(c.oid, 2, 0, 1) AS h FROM pg_catalog.pg_class c',
  withOid(
    "CREATE VIEW s.deep_v AS SELECT pg_catalog.array_in(pg_catalog.textout(pg_catalog.lower(pg_catalog.upper('{1}')))::cstring, %s, -1)::text AS a",
  ),
  `CREATE FUNCTION s.parse_plpgsql(x text) RETURNS text LANGUAGE plpgsql AS $$ DECLARE t oid; BEGIN
     SELECT y.oid INTO t FROM pg_catalog.pg_type y WHERE y.typname OPERATOR(pg_catalog.=) ('guar' || 'ded');
     RETURN pg_catalog.DOMAIN_IN (x::cstring, t, -1)::text; END $$`,
  // array_in called by a Unicode-escaped name: the body's reading cannot tell its arguments.
  'CREATE FUNCTION s.parse_escaped(x text) RETURNS text LANGUAGE sql AS $$ SELECT pg_catalog.U&"arr\\0061y_in"(x::cstring, 23, -1)::text $$',
  // A domain whose CHECK hands array_in its value as the type.
  "CREATE DOMAIN s.sneaky AS int CHECK (pg_catalog.array_in('{1}', VALUE::oid, -1) IS NOT NULL)",
  'CREATE TABLE s.sneaky_t (v s.sneaky)',
  // Tables whose default hands a dispatcher the domain: as a number, and as a value chosen when a row is written.
  withOid("CREATE TABLE s.logged (id int, tag text DEFAULT pg_catalog.array_in('{1}', %s, -1)::text)"),
  "CREATE TABLE s.logged_rt (id int, tag text DEFAULT pg_catalog.array_in('{1}', pg_catalog.int4(pg_catalog.random() OPERATOR(pg_catalog.*) 0)::oid, -1)::text)",
  "CREATE TABLE s.logged_int (id int, tag text DEFAULT pg_catalog.array_in('{1}', 23, -1)::text)",
  // Controls: built-in types only.
  "CREATE VIEW s.builtin_v AS SELECT pg_catalog.array_in('{1,2}', 23, -1)::text AS a, pg_catalog.range_in('[1,2]', 'int4range'::regtype, -1)::text AS r",
  'CREATE FUNCTION s.parse_int_atomic(x text) RETURNS text LANGUAGE sql BEGIN ATOMIC SELECT pg_catalog.array_in(x::cstring, 23, -1)::text; END',
];

const RUN_TIME = /hands (array_in|domain_in|record_in)\(\) a type chosen only when it runs/;
/** satisfies_hash_partition runs a relation's own code, and is refused as the other built-ins that do (postgres-relation-code.ts). */
const RELATION_RUN_TIME =
  /hands a built-in that runs a relation's own code \(satisfies_hash_partition.* a relation chosen only when it runs/;
const CHECK_RUNS = /calls pg_cancel_backend\(\)/;
/** A stored tree (view, BEGIN ATOMIC body, default) handing a dispatcher a person's type by its number: refused, not followed. */
const BY_NUMBER = /hands array_in\(\) a type chosen only when it runs .* or a type created since installation given by its number/;

// The walk is planned on every call, which on a busy server takes seconds.
describe.skipIf(!available)('PostgreSQL resolve step: a type handed to a type-dispatching function', { timeout: 180_000 }, () => {
  const { answer } = resolveScratch(TAG, OBJECTS);

  const fn = (name: string): StatementReferences => ({ relations: [], functions: [name] });
  const view = (name: string): StatementReferences => ({ relations: [`"s"."${name}"`], functions: [] });

  it.each(['parse_sql', 'parse_plpgsql', 'parse_atomic', 'parse_escaped'])(
    'refuses %s, which hands a dispatcher a type chosen when it runs',
    async (name) => {
      expect(await answer(fn(name), 'walk')).toMatch(RUN_TIME);
      expect(await answer({ ...fn(name), readOnly: true }, 'walk')).toMatch(RUN_TIME);
    },
  );

  it.each(['runtime_v', 'column_v'])('refuses the view %s, whose type is an expression', async (name) => {
    expect(await answer(view(name), 'view')).toBe('further');
    expect(await answer(view(name), 'walk')).toMatch(RUN_TIME);
  });

  it('refuses the view hash_v, whose relation handed to satisfies_hash_partition is an expression', async () => {
    expect(await answer(view('hash_v'), 'view')).toBe('further');
    expect(await answer(view('hash_v'), 'walk')).toMatch(RELATION_RUN_TIME);
  });

  it('refuses a domain whose CHECK hands a dispatcher its value as the type', async () => {
    expect(await answer(view('sneaky_t'), 'walk')).toMatch(RUN_TIME);
    expect(await answer({ relations: [], functions: [], types: ['sneaky'] }, 'walk')).toMatch(RUN_TIME);
  });

  it.each(['const_v', 'deep_v'])('refuses a view handing a dispatcher a person\'s domain by its number: %s', async (name) => {
    expect(await answer(view(name), 'view')).toBe('further');
    expect(await answer(view(name), 'walk')).toMatch(BY_NUMBER);
  });

  it('follows the domain a text body hands a dispatcher as a constant OID', async () => {
    expect(await answer(fn('parse_const'), 'walk')).toMatch(CHECK_RUNS);
  });

  it('refuses a BEGIN ATOMIC body handing a dispatcher a person\'s domain by its number', async () => {
    expect(await answer(fn('parse_const_atomic'), 'walk')).toMatch(BY_NUMBER);
  });

  it('sends a write to the walk when a default hands a dispatcher a type, and judges the type or refuses', async () => {
    const write = (name: string): StatementReferences => ({ relations: [`"s"."${name}"`], written: [`"s"."${name}"`], functions: [] });
    expect(await answer(write('logged'), 'first')).toBe('further');
    expect(await answer(write('logged'), 'walk')).toMatch(BY_NUMBER);
    expect(await answer(write('logged_rt'), 'first')).toBe('further');
    expect(await answer(write('logged_rt'), 'walk')).toMatch(RUN_TIME);
    expect(await answer(write('logged_int'), 'walk')).toBe('nothing');
  });

  it('follows a type the statement hands a dispatcher by name', async () => {
    expect(await answer({ relations: [], functions: ['array_in'], types: ['regtype', 'guarded'] }, 'walk')).toMatch(CHECK_RUNS);
  });

  it('still answers a view and functions that give built-in types as constants', async () => {
    expect(await answer(view('builtin_v'), 'view')).toBe('further');
    expect(await answer(view('builtin_v'), 'walk')).toBe('nothing');
    expect(await answer(fn('parse_int'), 'walk')).toBe('nothing');
    expect(await answer(fn('parse_int_atomic'), 'walk')).toBe('nothing');
  });
});
