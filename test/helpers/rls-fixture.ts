/**
 * The PostgreSQL row-level-security fixtures the context-value tests share. `RlsFixture`
 * (`test/e2e/context-postgres.test.ts`, `test/e2e/mcp-http-postgres.test.ts`): a login role, a
 * table of 5 rows for each of customers 1 to 3 with a policy that shows a session only the rows
 * of the customer in `mcp.customer_id`, and the grant; names unique per run. The leak counters
 * below (`foreignRows`, `interleavedLeaks`, `leaksAfterFault`) serve any engine's context test
 * (`test/e2e/context-mariadb.test.ts`, `test/e2e/context-sqlite.test.ts` too). `RlsOwnerDatabase`
 * (`test/e2e/owner-rights-postgres.test.ts`, `test/e2e/row-parts-postgres.test.ts`): a database of
 * its own whose objects a person created as their owner, read by a login role of its own.
 * `scopedAndPlainShims` and `rlsScopedAndPlain` (`test/e2e/named-figures-postgres.test.ts`,
 * `test/e2e/system-columns-postgres.test.ts`, `test/e2e/executor-statistics-postgres.test.ts`,
 * `test/e2e/planner-figures-postgres.test.ts`, `test/e2e/owner-rights-postgres.test.ts`,
 * `test/e2e/row-parts-postgres.test.ts`, `test/e2e/filtering-views-postgres.test.ts`,
 * `test/e2e/context-barrier-postgres.test.ts`, `test/e2e/lock-state-postgres.test.ts`): a
 * connection that separates rows beside one that does not, over the same role, each with a shim,
 * for the suite around the call.
 */
import { randomBytes } from 'node:crypto';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { PG_URL, type ScratchPgDatabase, scratchPgDatabase } from './engines.js';
import { type CliResult, TestHome } from './hanactl-home.js';
import { type ShimHandle, startShim, textOf } from './mcp-client.js';

export type RlsRow = { customer_id: number; item: string };

/** The policy of every fixture table: a session sees the rows of the customer in `mcp.customer_id`. */
export const RLS_POLICY = "customer_id = nullif(current_setting('mcp.customer_id', true), '')::int";

/**
 * `invoices`, partitioned by customer (`invoices_c1`, `invoices_c2`) under `RLS_POLICY`: customer 1
 * has `inv-1`, customer 2 `inv-2-a` and `inv-2-b`. Statements for the tables' owner to run.
 */
export const PARTITIONED_INVOICES: readonly string[] = [
  'CREATE TABLE invoices (customer_id int NOT NULL, item text NOT NULL) PARTITION BY LIST (customer_id)',
  'CREATE TABLE invoices_c1 PARTITION OF invoices FOR VALUES IN (1)',
  'CREATE TABLE invoices_c2 PARTITION OF invoices FOR VALUES IN (2)',
  "INSERT INTO invoices VALUES (1, 'inv-1'), (2, 'inv-2-a'), (2, 'inv-2-b')",
  'ALTER TABLE invoices ENABLE ROW LEVEL SECURITY',
  `CREATE POLICY by_customer ON invoices USING (${RLS_POLICY})`,
];

/** A unique suffix per run for the names a fixture creates. */
const runSuffix = (): string => `${process.pid}_${randomBytes(3).toString('hex')}`;

export class RlsFixture {
  /** The login role a connection uses; the policy applies to it. */
  readonly role: string;
  /** The table under row-level security. */
  readonly table: string;
  /** Every row of the table, as a caller asks for them (the policy filters). */
  readonly select: string;
  readonly password = randomBytes(12).toString('hex');
  #admin: pg.Client | undefined;

  /** Names only: `${names.role}_<run>` and `${names.table}_<run>`; nothing is created before `setUp`. */
  constructor(names: { role: string; table: string }) {
    const suffix = runSuffix();
    this.role = `${names.role}_${suffix}`;
    this.table = `${names.table}_${suffix}`;
    this.select = `SELECT customer_id, item FROM ${this.table}`;
  }

  /** The superuser session that set the fixture up (for killing the role's sessions in a test). */
  get admin(): pg.Client {
    if (!this.#admin) throw new Error('RlsFixture.setUp() has not run');
    return this.#admin;
  }

  /** Creates the role, the table with its rows, the policy and the grant. */
  async setUp(): Promise<void> {
    const { role, table } = this;
    const admin = new pg.Client({ connectionString: PG_URL });
    this.#admin = admin;
    await admin.connect();
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD '${this.password}'`);
    await admin.query(`CREATE TABLE ${table} (customer_id int NOT NULL, item text NOT NULL)`);
    await admin.query(`INSERT INTO ${table} SELECT c, 'item-' || c || '-' || g FROM generate_series(1, 3) c, generate_series(1, 5) g`);
    await admin.query(`ALTER TABLE ${table} ENABLE ROW LEVEL SECURITY`);
    await admin.query(`CREATE POLICY by_customer ON ${table} USING (${RLS_POLICY})`);
    await admin.query(`GRANT SELECT ON ${table} TO ${role}`);
  }

  /** Registers connection `name` in `home` as the role, password on stdin, declaring the context parameter customer_id. */
  async addConnection(home: TestHome, name: string): Promise<void> {
    const u = new URL(PG_URL);
    await home.ok(
      ['add', '--no-test', name, `postgres://${this.role}@${u.host}${u.pathname}`, '--password-stdin', '--context', 'customer_id'],
      {
        input: this.password,
      },
    );
  }

  /** Kills every session of the role under the daemon (its pooled connections). */
  async killSessions(): Promise<void> {
    await this.admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1', [this.role]);
  }

  /** Drops the table and the role and closes the admin session; call after the daemon that used the role has stopped. */
  async dispose(): Promise<void> {
    await this.#admin?.query(`DROP TABLE IF EXISTS ${this.table}`);
    await this.#admin?.query(`DROP ROLE IF EXISTS ${this.role}`);
    await this.#admin?.end();
  }
}

/**
 * A database of its own (`${prefix}_<run>`) with a role `owner` (no login) that created the tables
 * under row security, and the login role `agent` a connection uses; further roles `members` are
 * inheriting members of the owner, whom its rights cover too. Names only until `setUp`.
 */
export class RlsOwnerDatabase {
  /** The database, and the prefix of every role's name. */
  readonly name: string;
  readonly owner: string;
  readonly agent: string;
  readonly password = randomBytes(12).toString('hex');
  #members: readonly string[];
  #scratch: ScratchPgDatabase | undefined;

  constructor(prefix: string, { members = [] }: { members?: readonly string[] } = {}) {
    this.name = `${prefix}_${runSuffix()}`;
    this.owner = `${this.name}_owner`;
    this.agent = `${this.name}_agent`;
    this.#members = members.map((member) => `${this.name}_${member}`);
  }

  /** The role of member `member` (as given to the constructor). */
  member(member: string): string {
    return `${this.name}_${member}`;
  }

  /**
   * Creates the roles and the database, then runs `owned` as the owner (a statement `SET ROLE`
   * may switch to a member) and `asSuperuser` after it.
   */
  async setUp(owned: readonly string[], asSuperuser: readonly string[] = []): Promise<void> {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    try {
      await admin.query(`CREATE ROLE ${this.owner}`);
      await admin.query(`CREATE ROLE ${this.agent} LOGIN PASSWORD '${this.password}'`);
      for (const member of this.#members) await admin.query(`CREATE ROLE ${member} IN ROLE ${this.owner}`);
    } finally {
      await admin.end();
    }
    this.#scratch = await scratchPgDatabase(this.name, [
      `GRANT CREATE ON SCHEMA public TO ${this.owner}`,
      `SET ROLE ${this.owner}`,
      ...owned,
      'RESET ROLE',
      ...asSuperuser,
    ]);
  }

  /**
   * Registers connection `name` in `home` as the agent (or `login`, a role of the same password),
   * password on stdin, with the `add` options `flags`; untested unless `test`. What `add` printed.
   */
  async addConnection(
    home: TestHome,
    name: string,
    flags: readonly string[] = [],
    { login = this.agent, test = false }: { login?: string; test?: boolean } = {},
  ): Promise<CliResult> {
    const u = new URL(this.url);
    return home.ok(
      ['add', ...(test ? [] : ['--no-test']), name, `postgres://${login}@${u.host}${u.pathname}`, '--password-stdin', ...flags],
      {
        input: this.password,
      },
    );
  }

  /** Registers `shop`, declaring the context parameter customer_id, and `plain`, declaring none, as the agent. */
  async addScopedAndPlain(home: TestHome): Promise<void> {
    await this.addConnection(home, 'shop', ['--context', 'customer_id']);
    await this.addConnection(home, 'plain');
  }

  /** The database's URL as the superuser that set it up. */
  get url(): string {
    if (!this.#scratch) throw new Error('RlsOwnerDatabase.setUp() has not run');
    return this.#scratch.url;
  }

  /** Runs `statements` in the database as the superuser, in order. */
  async asSuperuser(statements: readonly string[]): Promise<void> {
    if (!this.#scratch) throw new Error('RlsOwnerDatabase.setUp() has not run');
    for (const sql of statements) await this.#scratch.db.query(sql);
  }

  /** Drops the database and the roles; call after the daemon that used the agent has stopped. */
  async dispose(): Promise<void> {
    await this.#scratch?.drop();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    for (const role of [this.agent, ...this.#members, this.owner]) await admin.query(`DROP ROLE IF EXISTS ${role}`).catch(() => {});
    await admin.end();
  }
}

/** What a leak counter checks of each result: how many rows a caller sees of its own (any, if not given). */
export interface LeakCheck {
  readonly rows?: number;
}

/**
 * Asserts a `run_query` result succeeded with rows (exactly `check.rows` of them, if given), and
 * counts the rows of customers other than `customer` (a `customer_id` read as text counts by its number).
 */
export function foreignRows(result: CallToolResult, customer: number, check: LeakCheck = {}): number {
  expect(result.isError, textOf(result)).toBeFalsy();
  const rows = (result.structuredContent as { rows: { customer_id: number | string }[] }).rows;
  if (check.rows === undefined) expect(rows.length).toBeGreaterThan(0);
  else expect(rows).toHaveLength(check.rows);
  return rows.filter((r) => Number(r.customer_id) !== customer).length;
}

/** A client of one connection: the shim over stdio or an MCP over HTTP client. */
export interface ToolCaller {
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
}

/**
 * `batches` (25) batches of 20 concurrent `sql` calls, alternating `one` (customer 1) and `two` (customer 2);
 * the number of rows either saw of another customer (each result is checked by `foreignRows`).
 */
export async function interleavedLeaks(
  one: ToolCaller,
  two: ToolCaller,
  sql: string,
  { batches = 25, ...check }: LeakCheck & { readonly batches?: number } = {},
): Promise<number> {
  let leaks = 0;
  for (let batch = 0; batch < batches; batch++) {
    const calls: [ToolCaller, number][] = Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? [one, 1] : [two, 2]));
    const results = await Promise.all(calls.map(([caller]) => caller.call('run_query', { sql })));
    results.forEach((r, i) => {
      leaks += foreignRows(r, calls[i]?.[1] ?? 0, check);
    });
  }
  return leaks;
}

/**
 * After a fault: 10 rounds of one concurrent `sql` call each from `one` (customer 1) and `two`
 * (customer 2), a round with an error skipped; the number of rows either saw of another customer.
 */
export async function leaksAfterFault(one: ToolCaller, two: ToolCaller, sql: string, check: LeakCheck = {}): Promise<number> {
  let leaks = 0;
  for (let batch = 0; batch < 10; batch++) {
    const [a, b] = await Promise.all([one.call('run_query', { sql }), two.call('run_query', { sql })]);
    if (a.isError || b.isError) continue; // the first call after the kill may fail; the next succeeds
    leaks += foreignRows(a, 1, check) + foreignRows(b, 2, check);
  }
  return leaks;
}

/** Two shims on one connection: `one` for customer 1 and `two` for customer 2 (MCP_CONTEXT_CUSTOMER_ID). */
export interface CustomerShims {
  readonly one: ShimHandle;
  readonly two: ShimHandle;
  close(): Promise<void>;
}

/** Starts the shims of customers 1 and 2 on `connection` in `home`. */
export async function startCustomerShims(home: TestHome, connection: string): Promise<CustomerShims> {
  const one = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '1' }, ['--connection', connection]);
  const two = await startShim({ ...home.env, MCP_CONTEXT_CUSTOMER_ID: '2' }, ['--connection', connection]).catch(async (err) => {
    await one.close();
    throw err;
  });
  return {
    one,
    two,
    async close() {
      await one.close();
      await two.close();
    },
  };
}

/** A further shim of a suite: on `connection`, as customer `customer` (MCP_CONTEXT_CUSTOMER_ID) when given. */
export interface ShimSpec {
  readonly connection: string;
  readonly customer?: string;
}

/** Connection `shop`, which separates rows, and `plain`, which does not, each with a shim. */
export interface ScopedAndPlain {
  /** The home both connections are in. */
  readonly home: TestHome;
  /** The shim of `shop` as customer 1 (MCP_CONTEXT_CUSTOMER_ID), once the suite's set-up ran. */
  readonly scoped: ToolCaller;
  /** The shim of `plain`, which declares no context names, once the suite's set-up ran. */
  readonly plain: ToolCaller;
}

/**
 * Calls `tool` with `args` where rows are separated (`scoped`), then where they are not
 * (`plain`): refused by `rule` on the first, answered on the second. Returns the refusal's text.
 */
export async function refusedOnlyWhereSeparated(
  { scoped, plain }: Pick<ScopedAndPlain, 'scoped' | 'plain'>,
  rule: string,
  tool: string,
  args: Record<string, unknown>,
): Promise<string> {
  const refused = await scoped.call(tool, args);
  expect(refused.isError, textOf(refused)).toBe(true);
  expect(textOf(refused)).toContain(`(rule: ${rule})`);
  const kept = await plain.call(tool, args);
  expect(kept.isError, textOf(kept)).toBeFalsy();
  return textOf(refused);
}

/**
 * Before the suite around the call, `setUp` creates what the connections read and adds `shop`
 * (declaring customer_id) and `plain` (declaring none) to the home, and any connection `more`
 * names; then a shim starts on each (`more`'s under their own keys). After the suite: the shims,
 * the home, then `dispose`.
 */
export function scopedAndPlainShims<K extends string = never>({
  setUp,
  dispose,
  more,
}: {
  setUp(home: TestHome): Promise<void>;
  dispose(): Promise<void>;
  more?: Record<K, ShimSpec>;
}): ScopedAndPlain & { readonly [key in K]: ToolCaller } {
  const home = new TestHome();
  const specs: [string, ShimSpec][] = [
    ['scoped', { connection: 'shop', customer: '1' }],
    ['plain', { connection: 'plain' }],
    ...(Object.entries(more ?? {}) as [string, ShimSpec][]),
  ];
  const shims = new Map<string, ShimHandle>();
  beforeAll(async () => {
    await setUp(home);
    for (const [key, { connection, customer }] of specs) {
      const env = customer === undefined ? home.env : { ...home.env, MCP_CONTEXT_CUSTOMER_ID: customer };
      shims.set(key, await startShim(env, ['--connection', connection]));
    }
  });
  afterAll(async () => {
    for (const shim of shims.values()) await shim.close();
    await home.dispose();
    await dispose();
  });
  const callers: Record<string, ToolCaller> = {};
  for (const [key, { connection }] of specs)
    callers[key] = {
      call(name, args) {
        const shim = shims.get(key);
        if (!shim) throw new Error(`the shim of ${connection} has not started`);
        return shim.call(name, args);
      },
    };
  return { home, ...callers } as ScopedAndPlain & { readonly [key in K]: ToolCaller };
}

/**
 * `scopedAndPlainShims` over `rls`: its role and table, then `objects` run as the superuser;
 * `shop` and `plain` as the role, `plain` set to declare no context names. After the suite,
 * `dropped` runs (errors ignored) before the fixture is disposed.
 */
export function rlsScopedAndPlain(
  rls: RlsFixture,
  { objects = [], dropped = [] }: { objects?: readonly string[]; dropped?: readonly string[] } = {},
): ScopedAndPlain {
  return scopedAndPlainShims({
    async setUp(home) {
      await rls.setUp();
      for (const sql of objects) await rls.admin.query(sql);
      await rls.addConnection(home, 'shop');
      await rls.addConnection(home, 'plain');
      await home.ok(['set', 'plain', '--no-context']);
    },
    async dispose() {
      for (const sql of dropped) {
        try {
          await rls.admin.query(sql);
        } catch {
          // Not there: the set-up stopped before it.
        }
      }
      await rls.dispose();
    },
  });
}
