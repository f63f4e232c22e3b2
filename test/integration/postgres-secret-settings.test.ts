/**
 * Settings read wholesale (SHOW ALL, pg_settings, pg_show_all_settings(), current_setting() of a
 * name built when it runs), directly or through a view or a function body, are refused only where
 * the server holds a setting that can carry a secret, non-empty and readable by the login.
 *
 * The settings that can carry one (primary_conninfo, archive_command, ...) are server-wide, and the
 * shared server's are never changed here: the list is extended, for this file only, with
 * application_name, a setting any session sets for itself, so that "a secret setting is held" is
 * made and unmade per session.
 */
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { nextStage, type ResolveStage } from '../../daemon/engines/postgres/postgres-resolve.js';
import { checkStatement } from '../../daemon/policy/index.js';
import type { PolicyOptions, StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';

vi.mock('../../daemon/policy/pg-functions.js', async (original) => {
  const actual = await original<typeof import('../../daemon/policy/pg-functions.js')>();
  return { ...actual, PG_SECRET_SETTINGS: [...actual.PG_SECRET_SETTINGS, 'application_name'] };
});

const available = await serverAvailable('postgres');
const TAG = `hanactl_secset_${process.pid}`;

const OBJECTS = [
  'CREATE VIEW public.v_settings AS SELECT name, setting FROM pg_catalog.pg_settings',
  'CREATE VIEW public.v_all AS SELECT * FROM pg_catalog.pg_show_all_settings() AS a',
  "CREATE VIEW public.v_built AS SELECT pg_catalog.current_setting(n) AS v FROM (VALUES ('work_mem')) AS x(n)",
  "CREATE VIEW public.v_named AS SELECT pg_catalog.current_setting('work_mem') AS v",
  "CREATE FUNCTION public.f_count() RETURNS bigint LANGUAGE sql AS 'SELECT count(*) FROM pg_settings'",
  'CREATE FUNCTION public.f_atomic() RETURNS bigint LANGUAGE sql BEGIN ATOMIC SELECT count(*) FROM pg_catalog.pg_settings; END',
  "CREATE FUNCTION public.f_plain() RETURNS int LANGUAGE sql AS 'SELECT 1'",
];

const READ_ONLY: PolicyOptions = { dialect: 'postgres', allowWrite: false };

function referencesOf(sql: string): StatementReferences {
  const verdict = checkStatement(sql, READ_ONLY, true);
  if (!verdict.ok) throw new Error(`${sql}: ${verdict.message}`);
  if (!verdict.references) throw new Error(`${sql}: names nothing the server resolves`);
  return verdict.references;
}

const WHOLESALE = [
  'SHOW ALL',
  'SELECT name, setting FROM pg_settings',
  'SELECT * FROM pg_catalog.pg_settings',
  'SELECT * FROM pg_show_all_settings()',
  "SELECT current_setting('primary_' || 'conninfo')",
  'SELECT * FROM public.v_settings',
  'SELECT * FROM public.v_all',
  'SELECT * FROM public.v_built',
  'SELECT public.f_count()',
  'SELECT public.f_atomic()',
];

const ORDINARY = ["SELECT current_setting('work_mem')", 'SELECT * FROM public.v_named', 'SELECT public.f_plain()'];

describe.skipIf(!available)('PostgreSQL: settings read wholesale where a secret setting is held', () => {
  const scratch = resolveScratch(TAG, OBJECTS);

  /** What the resolve step answers at last, each stage sending on to the next as the daemon does. */
  async function finalAnswer(sql: string): Promise<string> {
    const references = referencesOf(sql);
    let stage: ResolveStage = 'first';
    for (;;) {
      const answer = await scratch.answer(references, stage);
      if (answer !== 'further' || stage === 'walk') return answer;
      stage = nextStage(stage, references);
    }
  }

  beforeEach(async () => {
    await scratch.db().query('RESET application_name');
  });

  it.each(WHOLESALE)('%s is refused while a secret setting is held', async (sql) => {
    await scratch.db().query("SET application_name = 'host=primary user=replicator password=not-a-real-one'");
    const answer = await finalAnswer(sql);
    expect(answer).toMatch(/^Refused: .* reads the server's settings wholesale, and this server holds a setting the login may read/);
    expect(answer).not.toContain('not-a-real-one');
  });

  it.each(WHOLESALE)('%s runs where none is held', async (sql) => {
    await scratch.db().query("SET application_name = ''");
    expect(await finalAnswer(sql)).toBe('nothing');
  });

  it.each(ORDINARY)('%s (a setting read by a constant name) runs while a secret setting is held', async (sql) => {
    await scratch.db().query("SET application_name = 'host=primary password=not-a-real-one'");
    expect(await finalAnswer(sql)).toBe('nothing');
  });

  it('archive_command shown as (disabled), archiving off, counts as not held', async () => {
    const held = await scratch.db().query<{ s: string }>("SELECT setting AS s FROM pg_catalog.pg_settings WHERE name = 'archive_command'");
    expect(['', '(disabled)']).toContain(held.rows[0]?.s);
    await scratch.db().query("SET application_name = ''");
    expect(await finalAnswer('SHOW ALL')).toBe('nothing');
  });
});
