import { describe, expect, it } from 'vitest';
import { nextStage, type ResolveStage } from '../../daemon/engines/postgres/postgres-resolve.js';
import { checkStatement } from '../../daemon/policy/index.js';
import type { PolicyOptions, StatementReferences } from '../../daemon/policy/types.js';
import { serverAvailable } from '../helpers/engines.js';
import { resolveScratch } from '../helpers/resolve-scratch.js';
import { TYPE_CALL_FORMS, typeCallObjects } from '../helpers/type-calls.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_typecall_rs_${process.pid}`;

/**
 * A type named like a function call: where no function of that name fits one argument, the server
 * reads `name(x)` as a conversion to type `name` (parse_func.c, func_get_detail's coercion
 * fallback: the function's name looked up as a type name, with its qualification), and so runs
 * the type's own code: a domain's CHECK, a field's domain in a composite, an input function.
 * Attribute notation `(x).name` is tried as such a call too. The CHECK here calls a built-in that
 * ends other sessions.
 */
const OBJECTS = [
  ...typeCallObjects(
    'CREATE FUNCTION public.evil(int) RETURNS boolean LANGUAGE plpgsql AS $$ BEGIN PERFORM pg_catalog.pg_terminate_backend(0); RETURN true; END $$',
  ),
  'CREATE FUNCTION public.owner_check(int) RETURNS boolean LANGUAGE sql SECURITY DEFINER AS $$ SELECT true $$',
  'CREATE DOMAIN public.sdom AS int CHECK (public.owner_check(VALUE))',
];

const READ_ONLY: PolicyOptions = { dialect: 'postgres', allowWrite: false };

/** What the statement names, as the policy's parser check collects it. */
function referencesOf(sql: string, options: PolicyOptions = READ_ONLY): StatementReferences | undefined {
  const verdict = checkStatement(sql, options, true);
  if (!verdict.ok) throw new Error(`${sql}: ${verdict.message}`);
  return verdict.references;
}

describe.skipIf(!available)('PostgreSQL resolve step: a type named like a function call', { timeout: 180_000 }, () => {
  const { answer } = resolveScratch(TAG, OBJECTS);

  /** The answer of the stages in the order the daemon sends them: the first that does not say `further`. */
  async function resolved(references: StatementReferences | undefined): Promise<string> {
    if (!references) return 'no step';
    let stage: ResolveStage = 'first';
    for (;;) {
      const found = await answer(references, stage);
      if (found !== 'further' || stage === 'walk') return found;
      stage = nextStage(stage, references);
    }
  }

  it.each([...TYPE_CALL_FORMS, 'SELECT 1 WHERE dom(1) IS NOT NULL'])('refuses %s: the domain CHECK runs', async (sql) => {
    expect(await resolved(referencesOf(sql))).toMatch(/Refused: .*calls pg_terminate_backend\(\)/);
  });

  it('refuses the same on a writable connection with context names', async () => {
    const options: PolicyOptions = { dialect: 'postgres', allowWrite: true, rowSeparation: true };
    expect(await resolved(referencesOf('SELECT dom(1)', options))).toMatch(/Refused: .*calls pg_terminate_backend\(\)/);
  });

  it.each([{ allowWrite: false }, { allowWrite: true }, { allowWrite: true, rowSeparation: true }])(
    'refuses a domain whose CHECK calls a SECURITY DEFINER function, by call syntax (%o)',
    async (mode) => {
      const options: PolicyOptions = { dialect: 'postgres', ...mode };
      for (const sql of ['SELECT sdom(1)', 'SELECT (1).sdom', "SELECT _sdom('{1}')"]) {
        expect(await resolved(referencesOf(sql, options)), sql).toMatch(/calls owner_check\(\), a SECURITY DEFINER function/);
      }
    },
  );

  it.each([
    'SELECT int4(1.5)',
    'SELECT text(1)',
    'SELECT "numeric"(1)',
    "SELECT date('2020-01-01')",
    'SELECT plain_d(1)',
    'SELECT (1).plain_d',
  ])('finds nothing for %s', async (sql) => {
    expect(await resolved(referencesOf(sql))).toMatch(/^(nothing|no step)$/);
  });
});
