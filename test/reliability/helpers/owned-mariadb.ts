import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import { sleep } from './procs.js';
import { freePort, isRoot, missingTool, onPath, run, succeeds } from './run.js';

/** The user that must log in with a password on an owned instance. */
export const PASSWORD_USER = 'hanactl_pw';

function which(name: string, fallback: string): string | undefined {
  return existsSync(fallback) ? fallback : onPath(name);
}

/**
 * A MariaDB instance this test owns: `mariadb-install-db` into a temp folder (root with no
 * password, normal authentication), `mariadbd` on a free loopback port with a 16 MB buffer pool
 * and no binary log. `--no-defaults` keeps the machine's my.cnf (and the shared server) out of
 * it. `dispose()` stops it and removes the folder; a process exit hook kills it should a test die.
 */
export class OwnedMariadb {
  readonly dir: string;
  readonly port: number;
  readonly #server: string;
  #child: ChildProcess | undefined;
  #exited: Promise<void> = Promise.resolve();
  readonly #onExit = () => this.#child?.kill('SIGKILL');

  private constructor(server: string, dir: string, port: number) {
    this.#server = server;
    this.dir = dir;
    this.port = port;
    process.on('exit', this.#onExit);
  }

  /** Creates and starts an instance; null (skip) when MariaDB's binaries are missing outside CI. */
  static async create(options: { password?: string } = {}): Promise<OwnedMariadb | null> {
    const install = which('mariadb-install-db', '/usr/bin/mariadb-install-db');
    const server = which('mariadbd', '/usr/sbin/mariadbd');
    if (!install || !server) return missingTool('mariadb-install-db / mariadbd', 'the mariadb-server package');
    const dir = mkdtempSync(join(tmpdir(), 'hanactl-owned-mariadb-'));
    const instance = new OwnedMariadb(server, dir, await freePort());
    try {
      await run(install, [
        '--no-defaults',
        `--datadir=${join(dir, 'data')}`,
        '--auth-root-authentication-method=normal',
        '--skip-test-db',
        ...(isRoot() ? ['--user=root'] : []),
      ]);
      await instance.start();
      await instance.admin(async (c) => {
        await c.query('CREATE DATABASE IF NOT EXISTS test');
        if (options.password !== undefined) {
          await c.query(`CREATE USER '${PASSWORD_USER}'@'%' IDENTIFIED BY ?`, [options.password]);
          await c.query(`GRANT ALL ON *.* TO '${PASSWORD_USER}'@'%'`);
        }
      });
      return instance;
    } catch (err) {
      await instance.dispose();
      throw err;
    }
  }

  /** `mysql://user@127.0.0.1:port/test` with extra query options. */
  url(user = 'root', query = ''): string {
    return `mysql://${user}@127.0.0.1:${this.port}/test${query ? `?${query}` : ''}`;
  }

  /** Starts `mariadbd` and waits (at most 30 s) until it accepts connections. */
  async start(): Promise<void> {
    const child = spawn(
      this.#server,
      [
        '--no-defaults',
        `--datadir=${join(this.dir, 'data')}`,
        `--socket=${join(this.dir, 'mysqld.sock')}`,
        `--pid-file=${join(this.dir, 'mysqld.pid')}`,
        `--log-error=${join(this.dir, 'error.log')}`,
        `--port=${this.port}`,
        '--bind-address=127.0.0.1',
        '--innodb-buffer-pool-size=16M',
        '--innodb-log-file-size=8M',
        '--skip-log-bin',
        '--skip-name-resolve',
        '--max-connections=100',
        ...(isRoot() ? ['--user=root'] : []),
      ],
      { stdio: 'ignore' },
    );
    this.#child = child;
    this.#exited = new Promise((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 30_000;
    while (!(await this.accepting())) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`mariadbd did not start; see ${join(this.dir, 'error.log')}`);
      await sleep(20);
    }
  }

  /** Stops the server: SIGTERM is a clean shutdown, SIGKILL a crash. Waits until it has exited. */
  async stop(signal: 'SIGTERM' | 'SIGKILL' = 'SIGTERM'): Promise<void> {
    const child = this.#child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill(signal);
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    await this.#exited;
    clearTimeout(timer);
  }

  /** Runs `fn` with a root connection (closed after). */
  async admin<T>(fn: (c: mysql.Connection) => Promise<T>): Promise<T> {
    const c = await mysql.createConnection({ host: '127.0.0.1', port: this.port, user: 'root', connectTimeout: 3000 });
    try {
      return await fn(c);
    } finally {
      await c.end().catch(() => c.destroy());
    }
  }

  /** True once a fresh connection is accepted and answers. */
  accepting(): Promise<boolean> {
    return succeeds(() => this.admin((c) => c.query('SELECT 1')));
  }

  /** Stops the server (whatever state it is in) and removes its folder. */
  async dispose(): Promise<void> {
    process.off('exit', this.#onExit);
    await this.stop('SIGKILL').catch(() => {});
    rmSync(this.dir, { recursive: true, force: true });
  }
}
