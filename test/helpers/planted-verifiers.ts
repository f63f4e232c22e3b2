import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { PG_URL } from './engines.js';
import { TestHome } from './hanactl-home.js';
import { type ShimHandle, startShim } from './mcp-client.js';
import type { ToolCaller } from './rls-fixture.js';

/** What `plantedVerifiers` sets up for the suite around the call. */
export interface PlantedVerifiers {
  readonly home: TestHome;
  /** A superuser session on the server's own database. */
  readonly admin: pg.Client;
  /** The suite's database as the superuser (what `pgsu` is registered with). */
  readonly url: string;
  /** A superuser session on the suite's database (once set up). */
  db(): pg.Client;
  /** The shim on `pgsu`. */
  readonly shim: ToolCaller;
  /** The key material of each planted SCRAM verifier, the text after its last `$` (once set up): what must never show. */
  readonly verifiers: string[];
}

/**
 * Before the suite around the call: database `tag`, login roles `${tag}_1` to `${tag}_${roles}`
 * with passwords (their verifiers in pg_authid), `prepare` on the database, then the connection
 * `pgsu` to it as the server's superuser, registered as a person would (no password, read-only),
 * and a shim on it. After the suite: the shim, the home, the database and every role named
 * `${tag}_...` (those a test made too) are gone.
 */
export function plantedVerifiers(tag: string, roles: number, prepare: (db: pg.Client) => Promise<void>): PlantedVerifiers {
  const home = new TestHome();
  const admin = new pg.Client({ connectionString: PG_URL });
  const url = new URL(PG_URL);
  url.pathname = `/${tag}`;
  const verifiers: string[] = [];
  let db: pg.Client | undefined;
  let shim: ShimHandle | undefined;
  const owned = `LIKE '${tag}\\_%'`;

  beforeAll(async () => {
    await admin.connect();
    await admin.query(`CREATE DATABASE ${tag}`);
    for (let n = 1; n <= roles; n++)
      await admin.query(`CREATE ROLE ${tag}_${n} LOGIN PASSWORD 'Planted-${n}-${randomBytes(8).toString('hex')}'`);
    const { rows } = await admin.query(`SELECT rolpassword FROM pg_authid WHERE rolname ${owned} ORDER BY rolname`);
    for (const row of rows) verifiers.push(String(row.rolpassword).split('$').at(-1) as string);
    expect(verifiers).toHaveLength(roles);
    db = new pg.Client({ connectionString: url.toString() });
    await db.connect();
    await prepare(db);
    await home.ok(['add', '--no-test', '--no-password', 'pgsu', url.toString()]);
    shim = await startShim(home.env, ['--connection', 'pgsu']);
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    await db?.end();
    await admin.query(`DROP DATABASE IF EXISTS ${tag} WITH (FORCE)`).catch(() => {});
    const made = await admin.query(`SELECT rolname FROM pg_roles WHERE rolname ${owned}`).catch(() => ({ rows: [] }));
    for (const { rolname } of made.rows) await admin.query(`DROP ROLE IF EXISTS ${rolname}`).catch(() => {});
    await admin.end();
  });

  return {
    home,
    admin,
    url: url.toString(),
    db() {
      if (!db) throw new Error(`the database ${tag} was not created`);
      return db;
    },
    shim: {
      call(name, args) {
        if (!shim) throw new Error('the shim on pgsu has not started');
        return shim.call(name, args);
      },
    },
    verifiers,
  };
}
