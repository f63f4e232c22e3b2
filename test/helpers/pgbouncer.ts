/**
 * A real PgBouncer (the Debian package's binary) in front of the test PostgreSQL, in transaction
 * pooling mode: each client transaction gets whichever server connection is free, so nothing a
 * client leaves in a session is seen by the same client's next transaction. Started per test file
 * on a free loopback port, with its own config, and ended however the file ends.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { waitForOutput } from './children.js';
import { PG_URL } from './engines.js';
import { closedPort } from './ports.js';

export const PGBOUNCER_BIN = process.env.HANACTL_TEST_PGBOUNCER ?? '/usr/sbin/pgbouncer';

/**
 * Whether PgBouncer is installed. In CI a missing binary is a failure (`.ci/run` installs the
 * package); elsewhere the tests skip and say what to install.
 */
export function pgbouncerAvailable(): boolean {
  if (existsSync(PGBOUNCER_BIN)) return true;
  if (process.env.CI) throw new Error(`PgBouncer is not installed at ${PGBOUNCER_BIN} in CI (apt-get install pgbouncer)`);
  console.warn(`Skipping PgBouncer tests: ${PGBOUNCER_BIN} not found. Install it with: apt-get install pgbouncer`);
  return false;
}

export interface PgBouncerOptions {
  /** Login roles and their passwords (PgBouncer checks them, then logs in to PostgreSQL as the role). */
  readonly users: Readonly<Record<string, string>>;
  /** Server connections per database and role; small, so that clients share backends. */
  readonly poolSize?: number;
}

export class PgBouncer {
  readonly #dir: string;
  readonly #child: ChildProcess;
  readonly port: number;
  #log = '';

  private constructor(dir: string, child: ChildProcess, port: number) {
    this.#dir = dir;
    this.#child = child;
    this.port = port;
    child.stderr?.on('data', (chunk: Buffer) => {
      this.#log += chunk.toString();
    });
  }

  /** Starts PgBouncer and resolves once it logs that it listens. */
  static async start(options: PgBouncerOptions): Promise<PgBouncer> {
    const dir = mkdtempSync(join(tmpdir(), 'hanactl-pgbouncer-'));
    // PgBouncer refuses to run as root; as root it is started with -u postgres, which must read the files.
    chmodSync(dir, 0o755);
    const server = new URL(PG_URL);
    const port = await closedPort();
    const users = Object.entries(options.users)
      .map(([user, password]) => `"${user}" "${password}"`)
      .join('\n');
    writeFileSync(join(dir, 'users.txt'), `${users}\n`, { mode: 0o644 });
    writeFileSync(
      join(dir, 'pgbouncer.ini'),
      [
        '[databases]',
        `* = host=${server.hostname} port=${server.port || 5432}`,
        '[pgbouncer]',
        'listen_addr = 127.0.0.1',
        `listen_port = ${port}`,
        'unix_socket_dir =',
        'auth_type = md5',
        `auth_file = ${join(dir, 'users.txt')}`,
        'pool_mode = transaction',
        `default_pool_size = ${options.poolSize ?? 2}`,
        'max_client_conn = 500',
        // Every login role may read the console's SHOW commands (a test waits on clients queued for a server).
        `stats_users = ${Object.keys(options.users).join(', ')}`,
        '',
      ].join('\n'),
      { mode: 0o644 },
    );
    const asRoot = process.getuid?.() === 0;
    const child = spawn(PGBOUNCER_BIN, [...(asRoot ? ['-u', 'postgres'] : []), join(dir, 'pgbouncer.ini')], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const bouncer = new PgBouncer(dir, child, port);
    const exited = new Promise<never>((_, reject) =>
      child.once('exit', (code) => reject(new Error(`PgBouncer exited (${code}) before it listened: ${bouncer.#log}`))),
    );
    exited.catch(() => {});
    try {
      await Promise.race([waitForOutput(child.stderr as NodeJS.ReadableStream, /process up/, () => bouncer.#log), exited]);
    } catch (err) {
      await bouncer.stop();
      throw err;
    }
    return bouncer;
  }

  /** A connection URL through PgBouncer for `user` to the database of the test server's URL. */
  url(user: string): string {
    return `postgres://${user}@127.0.0.1:${this.port}${new URL(PG_URL).pathname}`;
  }

  /** A connection URL for `user` to PgBouncer's own console (SHOW POOLS, ...). */
  consoleUrl(user: string): string {
    return `postgres://${user}@127.0.0.1:${this.port}/pgbouncer`;
  }

  /** What PgBouncer has logged. */
  get log(): string {
    return this.#log;
  }

  /** Ends PgBouncer and removes its files. */
  async stop(): Promise<void> {
    if (this.#child.exitCode === null && this.#child.signalCode === null) {
      const exited = new Promise<void>((resolve) => this.#child.once('exit', () => resolve()));
      this.#child.kill('SIGTERM'); // immediate shutdown; SIGINT would wait for clients
      await exited;
    }
    rmSync(this.#dir, { recursive: true, force: true });
  }
}
