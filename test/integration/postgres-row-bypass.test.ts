/**
 * The catalog questions that decide whether a table's row-level security binds a role, asked of a
 * live server as each role (SET ROLE): the resolve step's stages (postgres-resolve.ts,
 * postgres-settled.ts), the walk's finding (postgres-owner-rights.ts) and the warning `hanactl add`
 * and `hanactl test` print (postgres-privileges.ts). Each answer is checked against what the server
 * itself does for that role: the rows it returns.
 */
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_PRIVILEGE_PROBE } from '../../daemon/engines/postgres/postgres-privileges.js';
import { FURTHER_MARKER, type ResolveStage, resolveStep, walkFinding } from '../../daemon/engines/postgres/postgres-resolve.js';
import { asPgSuperuser, type ScratchPgDatabase, scratchPgDatabase, serverAvailable } from '../helpers/engines.js';

const available = await serverAvailable('postgres');
const TAG = `hanactl_bypass_${process.pid}`;
const role = (name: string) => `${TAG}_${name}`;
const [owner, heir, noheir, bypasser, plain, viewer, support] = ['owner', 'heir', 'noheir', 'bypasser', 'plain', 'viewer', 'support'].map(
  role,
) as [string, string, string, string, string, string, string];

const POLICY = "customer_id = nullif(current_setting('mcp.customer_id', true), '')::int";

const table = (name: string, force = false): string[] => [
  `CREATE TABLE public.${name} (customer_id int, item text)`,
  `INSERT INTO public.${name} VALUES (1, 'one'), (2, 'two')`,
  `ALTER TABLE public.${name} ENABLE ROW LEVEL SECURITY`,
  ...(force ? [`ALTER TABLE public.${name} FORCE ROW LEVEL SECURITY`] : []),
  `CREATE POLICY by_customer ON public.${name} USING (${POLICY})`,
  `ALTER TABLE public.${name} OWNER TO ${owner}`,
  `GRANT SELECT ON public.${name} TO PUBLIC`,
];

describe.skipIf(!available)('PostgreSQL: whether row security binds a role', () => {
  let scratch: ScratchPgDatabase | undefined;
  let db: pg.Client;

  beforeAll(async () => {
    await asPgSuperuser([
      `CREATE ROLE ${owner}`,
      `CREATE ROLE ${support}`,
      `CREATE ROLE ${heir} IN ROLE ${owner}`,
      `CREATE ROLE ${noheir} NOINHERIT IN ROLE ${owner}, ${support}`,
      `CREATE ROLE ${bypasser} BYPASSRLS`,
      `CREATE ROLE ${plain}`,
      `CREATE ROLE ${viewer} IN ROLE ${support}`,
    ]);
    scratch = await scratchPgDatabase(TAG, [
      ...table('loose'),
      ...table('forced', true),
      'CREATE VIEW public.over_loose WITH (security_invoker = true) AS SELECT * FROM public.loose',
      `GRANT SELECT ON public.over_loose TO PUBLIC`,
      `CREATE POLICY support_all ON public.forced FOR SELECT TO ${support} USING (true)`,
      'CREATE VIEW public.by_viewer WITH (security_barrier) AS SELECT * FROM public.forced',
      `ALTER VIEW public.by_viewer OWNER TO ${viewer}`,
      `GRANT SELECT ON public.by_viewer TO PUBLIC`,
      "SELECT set_config('mcp.customer_id', '1', false)",
    ]);
    db = scratch.db;
  });

  afterAll(async () => {
    await scratch?.drop();
    await asPgSuperuser(
      [heir, noheir, bypasser, plain, viewer, support, owner].map((r) => `DROP ROLE IF EXISTS ${r}`),
      { ignoreErrors: true },
    );
  });

  /** Runs `work` as `as` (a role name, or null for the superuser), resetting the role after. */
  async function asRole<T>(as: string | null, work: () => Promise<T>): Promise<T> {
    if (as) await db.query(`SET ROLE ${as}`);
    try {
      return await work();
    } finally {
      await db.query('RESET ROLE');
    }
  }

  async function stage(relation: string, at: ResolveStage): Promise<'settled' | 'further'> {
    const step = resolveStep({ relations: [`"public"."${relation}"`], functions: [], separated: true }, at);
    if (!step) throw new Error('no step');
    try {
      await db.query(step.text, step.values as string[]);
      return 'settled';
    } catch (err) {
      if ((err as Error).message.includes(FURTHER_MARKER)) return 'further';
      throw err;
    }
  }

  async function finding(relation: string): Promise<string | null> {
    const step = walkFinding({ relations: [`"public"."${relation}"`], functions: [], separated: true, readOnly: true });
    const { rows } = await db.query<{ what: string | null }>(step.text, step.values as string[]);
    return rows[0]?.what ?? null;
  }

  const customers = async (relation: string): Promise<number[]> =>
    (await db.query<{ customer_id: number }>(`SELECT customer_id FROM public.${relation} ORDER BY 1`)).rows.map((r) => r.customer_id);

  // What the server shows each role of `loose` (owned, not FORCE) and `forced`, and what hanactl must answer.
  it.each([
    [null, 'a superuser', [1, 2], [1, 2], 'bs'],
    [owner, 'the owner', [1, 2], [1], 'bo'],
    [heir, 'an inheriting member of the owner', [1, 2], [1], 'bo'],
    [noheir, 'a NOINHERIT member of the owner', [1], [1], null],
    [bypasser, 'a BYPASSRLS role', [1, 2], [1, 2], 'by'],
    [plain, 'another role', [1], [1], null],
  ] as const)('as %s (%s): the server shows loose %j, forced %j; hanactl finds %s', async (as, _who, loose, forced, kind) => {
    await asRole(as, async () => {
      expect(await customers('loose')).toEqual(loose);
      expect(await customers('forced')).toEqual(forced);
      const bypassed = loose.length > 1;
      // Every stage sends a table the login is not bound by on to the walk, and the walk names it.
      expect(await stage('loose', 'first')).toBe(bypassed ? 'further' : 'settled');
      expect(await stage('over_loose', 'view')).toBe(bypassed ? 'further' : 'settled');
      expect(await finding('loose')).toBe(kind ? `O loose reads loose over loose as ${kind}` : null);
      expect(await finding('over_loose')).toBe(kind ? `O over_loose reads loose over loose as ${kind}` : null);
      expect((await finding('forced')) !== null).toBe(forced.length > 1);
    });
  });

  it('judges a policy TO a role as applying to those with its privileges: a NOINHERIT member is not bound by it', async () => {
    // viewer inherits support, whose policy shows every row; noheir is a NOINHERIT member, and sees its own.
    await asRole(viewer, async () => expect(await customers('forced')).toEqual([1, 2]));
    await asRole(noheir, async () => {
      expect(await customers('forced')).toEqual([1]);
      expect(await customers('by_viewer')).toEqual([1, 2]);
      expect(await finding('by_viewer')).toBe('O by_viewer reads by_viewer over forced as p +support_all');
    });
    await asRole(viewer, async () => expect(await finding('by_viewer')).toBeNull());
  });

  it.each([
    [null, /superuser, which row-level security does not bind/],
    [owner, /owns 1 table under row-level security .*: loose\b/],
    [heir, /owns 1 table .*: loose\b/],
    [bypasser, /BYPASSRLS, which row-level security does not bind/],
    [noheir, null],
    [plain, null],
  ] as const)('warns %s where rows are separated', async (as, warning) => {
    const probe = POSTGRES_PRIVILEGE_PROBE.separation;
    if (!probe) throw new Error('no separation probe');
    const advice = await asRole(as, async () => probe.advice((await db.query(probe.sql)).rows[0], '"shop"'));
    if (warning) expect(advice.join('\n')).toMatch(warning);
    else expect(advice).toEqual([]);
  });
});
