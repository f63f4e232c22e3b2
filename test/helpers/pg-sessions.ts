import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, expect } from 'vitest';
import { asPgSuperuser, type ScratchPgDatabase, scratchPgDatabase } from './engines.js';
import { TestHome } from './hanactl-home.js';

/** A login role of the test server with a password, for a connection registered as a person would. */
export interface PgLogin {
  readonly name: string;
  readonly password: string;
  /** The URL of database `databaseUrl` as this role, without the password (what `add` is given). */
  url(databaseUrl: string): string;
  /** The same with the password, for a session the test opens itself. */
  urlWithPassword(databaseUrl: string): string;
  /** Drops the role; safe to call when it was never created. */
  drop(): Promise<void>;
}

/** Creates login role `name` with a fresh password. */
export async function createPgLogin(name: string, password = randomBytes(12).toString('hex')): Promise<PgLogin> {
  await asPgSuperuser([`CREATE ROLE ${name} LOGIN PASSWORD '${password}'`]);
  const url = (databaseUrl: string, withPassword: boolean): string => {
    const u = new URL(databaseUrl);
    u.username = name;
    u.password = withPassword ? password : '';
    return u.toString();
  };
  return {
    name,
    password,
    url: (databaseUrl) => url(databaseUrl, false),
    urlWithPassword: (databaseUrl) => url(databaseUrl, true),
    drop: () => asPgSuperuser([`DROP ROLE IF EXISTS ${name}`], { ignoreErrors: true }),
  };
}

/**
 * Another session on the server: what a person's code reached by a refused statement would end.
 * A test asserts it still answers after each refusal.
 */
export class VictimSession {
  private constructor(
    readonly client: pg.Client,
    /** The session's backend process id. */
    readonly pid: number,
  ) {}

  /** Opens a session on `connectionString`, under `applicationName` when given. */
  static async open(connectionString: string, applicationName?: string): Promise<VictimSession> {
    const client = new pg.Client({ connectionString, application_name: applicationName });
    // Ended from outside, the client reports the error on itself (and on a running query).
    client.on('error', () => {});
    await client.connect();
    try {
      const { rows } = await client.query('SELECT pg_catalog.pg_backend_pid() AS pid');
      return new VictimSession(client, Number(rows[0].pid));
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
  }

  /** Asserts that the session still answers. */
  async alive(): Promise<void> {
    const { rows } = await this.client.query('SELECT 1 AS one');
    expect(rows).toEqual([{ one: 1 }]);
  }

  /**
   * Starts a statement that runs for minutes and returns once `observer` (a session of the same
   * server) sees it active. `done` answers 'finished', or the error's SQLSTATE once it is ended.
   */
  async running(observer: pg.Client): Promise<{ done: Promise<unknown> }> {
    const done = this.client.query('SELECT pg_catalog.pg_sleep(600)').then(
      () => 'finished',
      (err: { code?: string }) => err.code,
    );
    // Wait for the event: the server lists the statement as active (each look is one round trip).
    for (;;) {
      const { rows } = await observer.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND state = 'active'", [this.pid]);
      if (rows.length > 0) return { done };
    }
  }

  /** Ends the session; safe to call when it has already been ended from outside. */
  async end(): Promise<void> {
    await this.client.end().catch(() => {});
  }
}

/**
 * Registers the login at `url` (no password in it) as the separation suites use it: `shop`
 * (context customer_id), `plain` (no context) and `shop_rw` (writable, context customer_id).
 */
export async function addShopConnections(home: TestHome, url: string, password: string): Promise<void> {
  await home.ok(['add', '--no-test', 'shop', url, '--password-stdin', '--context', 'customer_id'], { input: password });
  await home.ok(['add', '--no-test', 'plain', url, '--password-stdin'], { input: password });
  await home.ok(['add', '--no-test', 'shop_rw', url, '--password-stdin', '--context', 'customer_id', '--allow-write'], { input: password });
}

/**
 * Registers the login at `url` (no password in it) as `signed`, context customer_id with its values
 * signed, and returns the SQL that installs the verifying function in `schema` (`hanactl
 * context-sql`), for a superuser of the database to run.
 */
export async function addSignedConnection(home: TestHome, url: string, password: string, schema: string): Promise<string> {
  await home.ok(['add', '--no-test', 'signed', url, '--password-stdin', '--context', 'customer_id'], { input: password });
  await home.ok(['set', 'signed', '--signed-context']);
  return (await home.ok(['context-sql', 'signed', '--schema', schema])).stdout;
}

/** A login role and a scratch database, made before the suite around the call. */
export interface LoginDatabase {
  /** The home the suite registers its connections in (removed after the suite). */
  readonly home: TestHome;
  /** The role (once the suite's set-up ran). */
  login(): PgLogin;
  /** The database (once the suite's set-up ran). */
  scratch(): ScratchPgDatabase;
}

/**
 * Before the suite around the call, login role `role` and then scratch database `name` with
 * `objects`; after it, the home, the database and the role are gone. The suite's own hooks,
 * registered after this call, run after its set-up and before its tear-down.
 */
export function loginDatabase(role: string, name: string, objects: readonly string[]): LoginDatabase {
  const home = new TestHome();
  let login: PgLogin | undefined;
  let scratch: ScratchPgDatabase | undefined;
  beforeAll(async () => {
    login = await createPgLogin(role);
    scratch = await scratchPgDatabase(name, objects);
  });
  afterAll(async () => {
    await home.dispose();
    await scratch?.drop();
    await login?.drop();
  });
  return {
    home,
    login() {
      if (!login) throw new Error(`the role ${role} was not created`);
      return login;
    },
    scratch() {
      if (!scratch) throw new Error(`the database ${name} was not created`);
      return scratch;
    },
  };
}
