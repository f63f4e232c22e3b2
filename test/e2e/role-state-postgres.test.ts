/**
 * As whom a call runs, on connections that separate rows by context values, through the real shim
 * and daemon. The login is a NOINHERIT member of a role `support` with wider policies (a policy TO
 * support USING (true), SELECT on a ledger the login may not read): safe only while no call runs
 * as support. Refused: statements that make later sessions start as support or hand an object to
 * it (ALTER ROLE ... SET role, ALTER DATABASE ... SET, ALTER VIEW ... OWNER TO), a function whose
 * body sets the role (PL/pgSQL and SQL), a view owned by support over the ledger. A role default a
 * person set outside hanactl does not make a call run as support: a fresh backend of the login
 * starts as support, and the call runs as the login all the same. Ordinary reads still answer.
 */
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { asPgSuperuser, serverAvailable } from '../helpers/engines.js';
import { textOf } from '../helpers/mcp-client.js';
import { RLS_POLICY, RlsOwnerDatabase, scopedAndPlainShims } from '../helpers/rls-fixture.js';

const available = await serverAvailable('postgres');

describe.skipIf(!available)('the role a call runs as, where rows are separated, on PostgreSQL', () => {
  const db = new RlsOwnerDatabase('fix_rolestate');
  const support = `${db.name}_support`;
  const callers = scopedAndPlainShims({
    async setUp(home) {
      await asPgSuperuser([`CREATE ROLE ${support}`]);
      await db.setUp(
        [
          'CREATE TABLE orders_s (customer_id int NOT NULL, item text NOT NULL)',
          "INSERT INTO orders_s SELECT c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g",
          'ALTER TABLE orders_s ENABLE ROW LEVEL SECURITY',
          `CREATE POLICY by_customer ON orders_s USING (${RLS_POLICY})`,
          'CREATE TABLE ledger (customer_id int NOT NULL, note text NOT NULL)',
          "INSERT INTO ledger VALUES (1, 'led-1'), (2, 'led-2'), (3, 'led-3')",
        ],
        [
          `CREATE POLICY support_all ON orders_s TO ${support} USING (true)`,
          `GRANT SELECT ON orders_s TO ${db.agent}, ${support}`,
          `GRANT SELECT ON ledger TO ${support}`,
          `ALTER ROLE ${db.agent} NOINHERIT`,
          `GRANT ${support} TO ${db.agent}`,
          `CREATE SCHEMA agentws AUTHORIZATION ${db.agent}`,
          `GRANT USAGE ON SCHEMA agentws TO ${support}`,
          // A person's view handed to support: it reads the ledger with support's rights.
          'CREATE VIEW support_ledger AS SELECT * FROM ledger',
          `ALTER VIEW support_ledger OWNER TO ${support}`,
          `GRANT SELECT ON support_ledger TO ${db.agent}`,
        ],
      );
      await db.addScopedAndPlain(home);
      await db.addConnection(home, 'shopw', ['--allow-write', '--context', 'customer_id']);
      await db.addConnection(home, 'signedw', ['--allow-write', '--context', 'customer_id']);
      await home.ok(['set', 'signedw', '--signed-context']);
    },
    async dispose() {
      await db.dispose();
      await asPgSuperuser([`DROP ROLE IF EXISTS ${support}`], { ignoreErrors: true });
    },
    more: { writable: { connection: 'shopw', customer: '1' }, signed: { connection: 'signedw', customer: '1' } },
  });
  const { home, scoped, writable, signed } = callers;

  const rowsOf = (result: CallToolResult) => {
    expect(result.isError, textOf(result)).toBeFalsy();
    return (result.structuredContent as { rows: Record<string, unknown>[] }).rows;
  };
  const refused = (result: CallToolResult, rule: string) => {
    const text = textOf(result);
    expect(result.isError, text).toBe(true);
    expect(text).toContain(`(rule: ${rule})`);
    expect(text).not.toMatch(/item-[23]-|led-[23]/);
  };

  it('does not warn of role defaults where the login has none', async () => {
    expect((await home.ok(['test', 'shop'])).stderr).not.toMatch(/starts each session with/);
    // Its own schema agentws is not on its search path, and public takes no CREATE from it.
    expect((await home.ok(['test', 'shop'])).stderr).not.toMatch(/may create objects/);
  });

  it('answers ordinary reads as the login', async () => {
    expect(rowsOf(await scoped.call('run_query', { sql: 'SELECT * FROM orders_s' })).map((r) => r.customer_id)).toEqual([1, 1, 1, 1, 1]);
    expect(rowsOf(await signed.call('run_query', { sql: 'SELECT current_user AS u' }))).toEqual([{ u: db.agent }]);
  });

  it.each([
    `ALTER ROLE CURRENT_USER SET role = '${support}'`,
    `ALTER USER CURRENT_USER SET search_path = agentws, public`,
    'ALTER ROLE CURRENT_USER SET row_security = off',
    `ALTER ROLE CURRENT_USER IN DATABASE ${db.name} SET role = '${support}'`,
    'ALTER ROLE CURRENT_USER RESET ALL',
    `ALTER DATABASE ${db.name} SET role = '${support}'`,
    `GRANT ${support} TO CURRENT_USER`,
    `ALTER SCHEMA agentws OWNER TO ${support}`,
  ])('refuses %s on a writable signed connection', async (sql) => {
    refused(await signed.call('run_query', { sql }), 'role-state');
  });

  it('refuses ALTER VIEW ... OWNER TO on a writable connection, and the view is never handed over', async () => {
    // Every caller of the login shares its schema, so the agent does not create the view; the login owns it.
    refused(await writable.call('run_query', { sql: 'CREATE VIEW agentws.lv3 AS SELECT * FROM public.ledger' }), 'shared-schema');
    await db.asSuperuser(['CREATE VIEW agentws.lv3 AS SELECT * FROM public.ledger', `ALTER VIEW agentws.lv3 OWNER TO ${db.agent}`]);
    refused(await writable.call('run_query', { sql: `ALTER VIEW agentws.lv3 OWNER TO ${support}` }), 'role-state');
    refused(await signed.call('run_query', { sql: `ALTER TABLE agentws.lv3 OWNER TO ${support}` }), 'role-state');
  });

  it("refuses a person's view owned by support over a table the login may not read", async () => {
    refused(await scoped.call('run_query', { sql: 'SELECT * FROM support_ledger' }), 'owner-rights');
    refused(await writable.call('run_query', { sql: 'SELECT note FROM support_ledger' }), 'owner-rights');
    refused(await scoped.call('sample_rows', { schema: 'public', table: 'support_ledger' }), 'owner-rights');
  });

  it('refuses a function whose PL/pgSQL or SQL body sets the role, on the writable and the read-only connection', async () => {
    // A person's functions: the agent may not create any where rows are separated.
    await db.asSuperuser([
      `CREATE FUNCTION agentws.peek2() RETURNS SETOF orders_s LANGUAGE plpgsql AS $$ BEGIN SET LOCAL ROLE ${support}; RETURN QUERY SELECT * FROM orders_s; END $$`,
      `CREATE FUNCTION agentws.peek3() RETURNS SETOF orders_s LANGUAGE sql AS $$ SET LOCAL ROLE ${support}; SELECT * FROM orders_s $$`,
      'CREATE FUNCTION agentws.peek4() RETURNS int LANGUAGE plpgsql AS $$ BEGIN IF true THEN RESET "role"; END IF; RETURN 1; END $$',
      // The words in a comment, a string or as a variable's name set nothing: it answers.
      "CREATE FUNCTION agentws.fine() RETURNS SETOF orders_s LANGUAGE plpgsql AS $$ DECLARE role text := 'SET ROLE x'; BEGIN /* SET ROLE x */ RETURN QUERY SELECT * FROM orders_s; END $$",
    ]);
    expect(rowsOf(await scoped.call('run_query', { sql: 'SELECT * FROM agentws.fine()' })).map((r) => r.customer_id)).toEqual([
      1, 1, 1, 1, 1,
    ]);
    for (const caller of [signed, scoped]) {
      refused(await caller.call('run_query', { sql: 'SELECT * FROM agentws.peek2()' }), 'session-change');
      refused(await caller.call('run_query', { sql: 'SELECT * FROM agentws.peek3()' }), 'session-change');
      refused(await caller.call('run_query', { sql: 'SELECT agentws.peek4()' }), 'session-change');
    }
  });

  it('runs as the login when a person gave the login a role default, on a fresh backend', async () => {
    const admin = new pg.Client({ connectionString: db.url });
    await admin.connect();
    try {
      await admin.query(`ALTER ROLE ${db.agent} IN DATABASE ${db.name} SET role = '${support}'`);
      // Off, every read the policies bind would fail instead of answering.
      await admin.query(`ALTER ROLE ${db.agent} IN DATABASE ${db.name} SET row_security = off`);
      // The daemon's pooled sessions of the login end; the next call opens a backend that starts as support.
      await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [db.agent]);
      let result: CallToolResult | undefined;
      for (let attempt = 0; attempt < 5; attempt++) {
        result = await scoped.call('run_query', { sql: 'SELECT customer_id, item FROM orders_s' });
        if (!result.isError) break;
      }
      expect(rowsOf(result as CallToolResult).map((r) => r.customer_id)).toEqual([1, 1, 1, 1, 1]);
      // The backend the call ran on did start as support: its role default is in force outside the call.
      const starts = await admin.query(
        `SELECT count(*)::int AS n FROM pg_db_role_setting s JOIN pg_roles r ON r.oid = s.setrole WHERE r.rolname = $1 AND s.setconfig::text LIKE '%role=%'`,
        [db.agent],
      );
      expect(starts.rows[0].n).toBe(1);
      expect(rowsOf(await signed.call('run_query', { sql: 'SELECT current_user AS u, session_user AS s' }))).toEqual([
        { u: db.agent, s: db.agent },
      ]);
      refused(await scoped.call('run_query', { sql: 'SELECT * FROM support_ledger' }), 'owner-rights');
      // The person is told: other clients of the login still start as support.
      expect((await home.ok(['test', 'shop'])).stderr).toMatch(
        /warning: .*starts each session with role=.*row_security=off.*ALTER ROLE <login> RESET role/s,
      );
    } finally {
      await admin.query(`ALTER ROLE ${db.agent} IN DATABASE ${db.name} RESET ALL`).catch(() => {});
      await admin.end();
    }
  });
});
