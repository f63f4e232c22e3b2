import { describe, expect, it } from 'vitest';
import type { StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_rattr_${process.pid}`;

const OBJECTS = [
  'CREATE EXTENSION pg_prewarm',
  'CREATE EXTENSION dblink',
  'CREATE TABLE public.orders (id int, item text)',
  'CREATE FUNCTION public.f_txid() RETURNS bigint LANGUAGE sql AS $$ SELECT txid_current() $$',
  'CREATE TABLE public.gt (a int[])',
  'CREATE INDEX gt_gin ON public.gt USING gin (a)',
  "CREATE VIEW public.v_gin AS SELECT pg_catalog.gin_clean_pending_list('public.gt_gin'::pg_catalog.regclass) AS n",
];

// The walk is planned on every call, which on a busy server takes seconds.
describe.skipIf(!available)('PostgreSQL resolve step: attribute notation and the connection mode', { timeout: 180_000 }, () => {
  const { answer } = resolveScratch(TAG, OBJECTS);

  const attributes = (names: string[], extra: Partial<StatementReferences> = {}): StatementReferences => ({
    relations: ['"public"."orders"'],
    functions: [],
    attributes: names,
    ...extra,
  });

  it.each([
    ['pg_terminate_backend', /attribute notation.*pg_terminate_backend\(\) controls the server/],
    ['pg_stat_get_activity', /pg_stat_get_activity\(\) shows the text of other sessions' statements/],
    ['pg_prewarm', /attribute notation.*pg_prewarm\(\)/],
    ['dblink_exec', /attribute notation.*dblink_exec\(\)/],
    ['pg_read_file', /attribute notation.*pg_read_file\(\)/],
  ])('refuses .%s, a refused built-in or extension function', async (name, message) => {
    expect(await answer(attributes([name]), 'first')).toBe('further');
    expect(await answer(attributes([name]), 'walk')).toMatch(message);
  });

  it('refuses a name only a writable connection calls on a read-only one, and lets a writable one run it', async () => {
    expect(await answer(attributes(['gin_clean_pending_list'], { readOnly: true }), 'walk')).toMatch(
      /gin_clean_pending_list\(\) writes to the database, and this connection is read-only/,
    );
    expect(await answer(attributes(['gin_clean_pending_list']), 'walk')).toBe('nothing');
  });

  it('judges what a person view or function reaches with the connection mode', async () => {
    const fn: StatementReferences = { relations: [], functions: ['f_txid'] };
    expect(await answer({ ...fn, readOnly: true }, 'walk')).toMatch(/f_txid\(\) calls txid_current\(\).*read-only/);
    expect(await answer(fn, 'walk')).toBe('nothing');
    const view: StatementReferences = { relations: ['"public"."v_gin"'], functions: [] };
    expect(await answer({ ...view, readOnly: true }, 'view')).toBe('further');
    expect(await answer({ ...view, readOnly: true }, 'walk')).toMatch(/v_gin.* calls gin_clean_pending_list\(\).*read-only/);
    expect(await answer(view, 'walk')).toBe('nothing');
  });

  it('finds nothing for columns and fields read after a dot', async () => {
    expect(await answer(attributes(['id', 'item', 'relname'], { readOnly: true }), 'first')).toBe('nothing');
    expect(await answer(attributes(['id', 'item', 'relname'], { readOnly: true }), 'walk')).toBe('nothing');
  });
});
