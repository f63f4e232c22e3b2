import { execFileSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, isRoot, missingTool, onPath, run, succeeds } from './run.js';

/** The role that must log in with a password (scram-sha-256) on an owned instance. */
export const PASSWORD_ROLE = 'hanactl_pw';

function findBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0]) return join(base, versions[0], 'bin');
  const initdb = onPath('initdb');
  return initdb ? join(initdb, '..') : undefined;
}

/**
 * A PostgreSQL instance this test owns: `initdb` into a temp folder, started with `pg_ctl` on a
 * free loopback port (as the `postgres` OS user when running as root), small and unsafe
 * (`shared_buffers=16MB`, `fsync=off`). The shared server is never touched. `dispose()` stops
 * it and removes the folder; a process exit hook kills it should a test die first.
 */
export class OwnedPostgres {
  readonly dir: string;
  readonly port: number;
  readonly #bin: string;
  readonly #asPostgres: boolean;
  readonly #onExit = () => this.#killNow();

  private constructor(bin: string, dir: string, port: number) {
    this.#bin = bin;
    this.dir = dir;
    this.port = port;
    this.#asPostgres = isRoot();
    process.on('exit', this.#onExit);
  }

  /** Creates and starts an instance; null (skip) when PostgreSQL's binaries are missing outside CI. */
  static async create(options: { password?: string; maxConnections?: number } = {}): Promise<OwnedPostgres | null> {
    const bin = findBin();
    if (!bin) return missingTool('initdb (PostgreSQL server binaries)', 'the postgresql package');
    const dir = mkdtempSync(join(tmpdir(), 'hanactl-owned-pg-'));
    const instance = new OwnedPostgres(bin, dir, await freePort());
    try {
      if (instance.#asPostgres) {
        const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
        const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
        chownSync(dir, uid, gid);
      }
      await instance.#pg('initdb', ['-D', instance.#data, '-U', 'postgres', '--auth=trust', '-N', '-E', 'UTF8', '--locale=C']);
      if (options.password !== undefined) {
        writeFileSync(
          join(instance.#data, 'pg_hba.conf'),
          `local all all trust\nhost all ${PASSWORD_ROLE} 127.0.0.1/32 scram-sha-256\nhost all all 127.0.0.1/32 trust\n`,
        );
      }
      await instance.start(options.maxConnections);
      if (options.password !== undefined) {
        await instance.admin(async (c) => {
          await c.query(`CREATE ROLE ${PASSWORD_ROLE} LOGIN PASSWORD ${pg.escapeLiteral(options.password as string)}`);
        });
      }
      return instance;
    } catch (err) {
      await instance.dispose();
      throw err;
    }
  }

  get #data(): string {
    return join(this.dir, 'data');
  }

  /** `postgres://user@127.0.0.1:port/postgres` with extra query options. */
  url(user = 'postgres', query = ''): string {
    return `postgres://${user}@127.0.0.1:${this.port}/postgres${query ? `?${query}` : ''}`;
  }

  #pg(tool: string, args: readonly string[]): Promise<string> {
    const path = join(this.#bin, tool);
    return this.#asPostgres ? run('runuser', ['-u', 'postgres', '--', path, ...args]) : run(path, args);
  }

  #maxConnections = 60;

  /** Starts the server and waits until it accepts connections. */
  async start(maxConnections = this.#maxConnections): Promise<void> {
    this.#maxConnections = maxConnections;
    const settings = [
      `-p ${this.port}`,
      `-k ${this.dir}`,
      '-c listen_addresses=127.0.0.1',
      '-c shared_buffers=16MB',
      '-c fsync=off',
      '-c synchronous_commit=off',
      '-c full_page_writes=off',
      `-c max_connections=${maxConnections}`,
    ].join(' ');
    await this.#pg('pg_ctl', ['-D', this.#data, '-l', join(this.dir, 'server.log'), '-w', '-t', '30', '-o', settings, 'start']);
  }

  /** Stops the server: `fast` ends sessions politely, `immediate` is a crash. */
  async stop(mode: 'fast' | 'immediate' = 'fast'): Promise<void> {
    await this.#pg('pg_ctl', ['-D', this.#data, '-m', mode, '-w', '-t', '30', 'stop']);
  }

  /** Runs `fn` with a superuser client (closed after). */
  async admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
    const client = new pg.Client({
      host: '127.0.0.1',
      port: this.port,
      user: 'postgres',
      database: 'postgres',
      connectionTimeoutMillis: 3000,
    });
    client.on('error', () => {});
    await client.connect();
    try {
      return await fn(client);
    } finally {
      await client.end().catch(() => {});
    }
  }

  /** True once a fresh connection is accepted and answers. */
  accepting(): Promise<boolean> {
    return succeeds(() => this.admin((c) => c.query('SELECT 1')));
  }

  #postmasterPid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.#data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      return Number.isInteger(pid) && pid > 0 ? pid : undefined;
    } catch {
      return undefined;
    }
  }

  #killNow(): void {
    const pid = this.#postmasterPid();
    if (pid) {
      try {
        process.kill(pid, 'SIGQUIT'); // immediate shutdown: the postmaster takes its children along
      } catch {
        // not running
      }
    }
  }

  /** Stops the server (whatever state it is in) and removes its folder. */
  async dispose(): Promise<void> {
    process.off('exit', this.#onExit);
    if (this.#postmasterPid()) await this.stop('immediate').catch(() => this.#killNow());
    rmSync(this.dir, { recursive: true, force: true });
  }
}
