/**
 * Where rows are separated on PostgreSQL, through the real shim and daemon: logins and view owners
 * that a table's row-level security does not bind as hanactl might assume.
 *
 * A policy `TO role` applies to a user with that role's privileges (has_privs_of_role, the server's
 * rowsecurity.c), not to every member: a NOINHERIT member has them only after SET ROLE. So a view
 * owner that inherits a role a permissive policy names sees rows the NOINHERIT caller does not, and
 * a NOINHERIT owner escapes a restrictive policy on a role the caller inherits; both are refused.
 *
 * The login itself may not be bound (check_enable_rls): a superuser, a BYPASSRLS role, or a role
 * with the table owner's privileges when the table is not FORCE ROW LEVEL SECURITY. It reads every
 * caller's rows, so a statement that reaches such a table, directly, through a view or a function's
 * body, is refused, naming the table and the remedy; and `hanactl add` / `hanactl test` warn. A
 * table under FORCE, or owned by a role the login is a NOINHERIT member of, still answers.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { asPgSuperuser, serverAvailable } from '../helpers/engines.js';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY as POLICY, RlsOwnerDatabase } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

/** A table of 5 rows for each of customers 1 to 3 (`item-<c>-<n>`), under row security with the context policy. */
const rlsTable = (table: string, { force = false } = {}): string[] => [
  `CREATE TABLE ${table} (customer_id int NOT NULL, item text NOT NULL)`,
  `INSERT INTO ${table} SELECT c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g`,
  `ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`,
  ...(force ? [`ALTER TABLE ${table} FORCE ROW LEVEL SECURITY`] : []),
  `CREATE POLICY by_customer ON ${table} USING (${POLICY})`,
];

describe.skipIf(!available)('row security that does not bind the caller as assumed, on PostgreSQL', () => {
  const home = new TestHome();
  const db = new RlsOwnerDatabase('hanactl_bypass');
  const role = (name: string) => `${db.name}_${name}`;
  // support: a policy names it; vown inherits it, the agent is a NOINHERIT member. narrowed: a
  // restrictive policy names it; vown2 is a NOINHERIT member. tabowner owns a table; the agent is a
  // NOINHERIT member of it, heir an inheriting one. bypasser: BYPASSRLS.
  const [support, vown, narrowed, vown2, tabowner, heir, bypasser] = [
    'support',
    'vown',
    'narrowed',
    'vown2',
    'tabowner',
    'heir',
    'bypasser',
  ].map(role) as [string, string, string, string, string, string, string];
  let scoped: ShimHandle;
  let plain: ShimHandle;
  let inheriting: ShimHandle;
  let superuser: ShimHandle;
  let bypassing: ShimHandle;

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: { customer_id: number; item: string }[] }).rows;
  };
  const refused = (result: CallToolResult, message: RegExp) => {
    expect(result.isError, textOf(result)).toBe(true);
    expect(textOf(result)).toMatch(message);
    expect(textOf(result)).toContain('(rule: owner-rights)');
    expect(textOf(result)).not.toMatch(/item-[23]-|secret/);
  };

  beforeAll(async () => {
    const { agent, password } = db;
    await asPgSuperuser([
      ...[support, narrowed, tabowner].map((r) => `CREATE ROLE ${r}`),
      `CREATE ROLE ${vown} IN ROLE ${support}`,
      `CREATE ROLE ${vown2} NOINHERIT IN ROLE ${narrowed}`,
      `CREATE ROLE ${heir} LOGIN PASSWORD '${password}' IN ROLE ${tabowner}`,
      `CREATE ROLE ${bypasser} LOGIN BYPASSRLS PASSWORD '${password}'`,
    ]);
    await db.setUp(
      [...rlsTable('orders'), ...rlsTable('notes'), "INSERT INTO notes VALUES (1, 'secret-1')"],
      [
        `ALTER ROLE ${agent} NOINHERIT`,
        `GRANT ${support}, ${tabowner} TO ${agent}`,
        // Applies to vown (it inherits support), not to the NOINHERIT agent.
        `CREATE POLICY support_all ON orders FOR SELECT TO ${support} USING (true)`,
        'CREATE VIEW v_support WITH (security_barrier) AS SELECT customer_id, item FROM orders',
        `ALTER VIEW v_support OWNER TO ${vown}`,
        // Limits the agent (named), not vown2 (a NOINHERIT member of narrowed).
        `CREATE POLICY narrow ON notes AS RESTRICTIVE FOR SELECT TO ${narrowed}, ${agent} USING (item NOT LIKE 'secret%')`,
        'CREATE VIEW v_notes AS SELECT customer_id, item FROM notes',
        `ALTER VIEW v_notes OWNER TO ${vown2}`,
        `GRANT SELECT ON orders TO ${vown}, ${agent}, ${bypasser}`,
        `GRANT SELECT ON notes TO ${vown2}, ${agent}`,
        `GRANT SELECT ON v_support, v_notes TO ${agent}`,
        // Tables the agent owns: without FORCE its own rows policy does not bind it; with FORCE it does.
        ...rlsTable('agent_orders'),
        `ALTER TABLE agent_orders OWNER TO ${agent}`,
        ...rlsTable('agent_forced', { force: true }),
        `ALTER TABLE agent_forced OWNER TO ${agent}`,
        'CREATE VIEW v_agent_orders WITH (security_invoker = true) AS SELECT customer_id, item FROM agent_orders',
        `ALTER VIEW v_agent_orders OWNER TO ${agent}`,
        'CREATE FUNCTION agent_rows() RETURNS SETOF agent_orders LANGUAGE plpgsql STABLE AS $$ BEGIN RETURN QUERY SELECT * FROM agent_orders; END $$',
        `ALTER FUNCTION agent_rows() OWNER TO ${agent}`,
        // A table whose owner the agent is a NOINHERIT member of (bound), and heir an inheriting one (not bound).
        ...rlsTable('group_orders'),
        `ALTER TABLE group_orders OWNER TO ${tabowner}`,
        `GRANT SELECT ON group_orders TO ${agent}, ${heir}`,
      ],
    );
    await db.addConnection(home, 'shop', ['--context', 'customer_id']);
    await db.addConnection(home, 'plain');
    await db.addConnection(home, 'heir', ['--context', 'customer_id'], { login: heir });
    await db.addConnection(home, 'byp', ['--context', 'customer_id'], { login: bypasser });
    await home.ok(['add', '--no-test', 'su', db.url, '--no-password', '--context', 'customer_id']);
    const env = { ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' };
    scoped = await startShim(env, ['--connection', 'shop']);
    plain = await startShim(home.env, ['--connection', 'plain']);
    inheriting = await startShim(env, ['--connection', 'heir']);
    superuser = await startShim(env, ['--connection', 'su']);
    bypassing = await startShim(env, ['--connection', 'byp']);
  });

  afterAll(async () => {
    for (const shim of [scoped, plain, inheriting, superuser, bypassing]) await shim?.close();
    await home.dispose();
    await db.dispose();
    await asPgSuperuser(
      [heir, bypasser, vown, vown2, support, narrowed, tabowner].map((r) => `DROP ROLE IF EXISTS ${r}`),
      { ignoreErrors: true },
    );
  });

  describe('a policy applies to a role with its privileges, not to every member', () => {
    it('binds the NOINHERIT caller by the policies for its own privileges: orders shows customer 1 only', async () => {
      expect(new Set(rowsOf(await scoped.call('run_query', { sql: 'SELECT * FROM orders' })).map((r) => r.customer_id))).toEqual(
        new Set([1]),
      );
    });

    it('refuses a view whose owner inherits the role a permissive policy names, when the caller is a NOINHERIT member', async () => {
      refused(
        await scoped.call('run_query', { sql: 'SELECT * FROM v_support WHERE customer_id = 2' }),
        /v_support.*orders.*policy support_all/s,
      );
      refused(await scoped.call('sample_rows', { schema: 'public', table: 'v_support' }), /support_all/);
    });

    it('refuses a view whose NOINHERIT owner escapes a restrictive policy that limits the caller', async () => {
      refused(await scoped.call('run_query', { sql: 'SELECT * FROM v_notes' }), /v_notes.*notes.*restrictive policy narrow/s);
    });
  });

  describe('a login that row security does not bind', () => {
    it.each([
      ['SELECT * FROM agent_orders WHERE customer_id = 2', /agent_orders/],
      ['SELECT count(*) FROM agent_orders', /agent_orders/],
      ['SELECT * FROM v_agent_orders', /v_agent_orders reads agent_orders/],
      ['SELECT * FROM agent_rows()', /agent_rows\(\) reads agent_orders/],
      ['SELECT o.item FROM orders o JOIN agent_orders a USING (item)', /agent_orders/],
    ])('refuses %s on a table the login owns without FORCE', async (sql, message) => {
      const result = await scoped.call('run_query', { sql });
      refused(result, message);
      expect(textOf(result)).toMatch(/owns .*FORCE ROW LEVEL SECURITY/s);
      expect(textOf(result)).toContain('ALTER TABLE agent_orders FORCE ROW LEVEL SECURITY');
    });

    it('refuses sample_rows and explain_query there too', async () => {
      refused(await scoped.call('sample_rows', { schema: 'public', table: 'agent_orders' }), /agent_orders/);
      refused(await scoped.call('explain_query', { sql: 'SELECT * FROM agent_orders' }), /agent_orders/);
    });

    it('answers a table it owns under FORCE, and one whose owner it is a NOINHERIT member of, with its own rows', async () => {
      for (const table of ['agent_forced', 'group_orders'])
        expect(new Set(rowsOf(await scoped.call('run_query', { sql: `SELECT * FROM ${table}` })).map((r) => r.customer_id))).toEqual(
          new Set([1]),
        );
    });

    it("refuses a table whose owner's privileges the login inherits", async () => {
      const result = await inheriting.call('run_query', { sql: 'SELECT * FROM group_orders WHERE customer_id = 2' });
      refused(result, /group_orders/);
      expect(textOf(result)).toMatch(/owner's (rights|privileges)/);
    });

    it('refuses every table under row security to a superuser login', async () => {
      const result = await superuser.call('run_query', { sql: 'SELECT * FROM orders WHERE customer_id = 2' });
      refused(result, /orders.*superuser/s);
      refused(await superuser.call('run_query', { sql: 'SELECT * FROM agent_forced' }), /agent_forced.*superuser/s);
    });

    it('refuses every table under row security to a BYPASSRLS login', async () => {
      refused(await bypassing.call('run_query', { sql: 'SELECT * FROM orders WHERE customer_id = 2' }), /orders.*BYPASSRLS/s);
    });

    it('keeps them where no context names are declared', async () => {
      expect(rowsOf(await plain.call('run_query', { sql: 'SELECT * FROM agent_orders' }))).toHaveLength(15);
    });
  });

  describe('hanactl add and hanactl test', () => {
    const rowSecurity = /row-level security/;

    it('warn, with context names, that the login owns tables whose policies do not bind it', async () => {
      const added = await db.addConnection(home, 'shop2', ['--context', 'customer_id'], { test: true });
      expect(added.stderr).toMatch(/warning: .*owns 1 table under row-level security .*agent_orders/);
      expect(added.stderr).toMatch(/FORCE ROW LEVEL SECURITY/);
      expect(added.stderr).not.toMatch(/agent_forced/);
      expect((await home.ok(['test', 'heir'])).stderr).toMatch(/warning: .*group_orders/);
    });

    it('warn on a superuser and on a BYPASSRLS login', async () => {
      expect((await home.ok(['test', 'su'])).stderr).toMatch(/warning: .*superuser, which row-level security does not bind/);
      expect((await home.ok(['test', 'byp'])).stderr).toMatch(/warning: .*BYPASSRLS, which row-level security does not bind/);
    });

    it('do not warn without context names', async () => {
      expect((await home.ok(['test', 'plain'])).stderr).not.toMatch(rowSecurity);
      expect((await db.addConnection(home, 'plain2', [], { test: true })).stderr).not.toMatch(rowSecurity);
    });
  });
});
