import { createRequire } from 'node:module';
import { chmodSync, closeSync, existsSync, openSync } from 'node:fs';
import type { Target } from '../../shared/connection-url.js';
import { HanactlError } from '../../shared/errors.js';
import { type ConnectionRecord, makeRecord } from './connection-record.js';

const require = createRequire(import.meta.url);

interface Statement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

interface Database {
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  exec(sql: string): void;
  prepare(sql: string): Statement;
  transaction<T>(fn: () => T): () => T;
  close(): void;
}

interface Row {
  name: string;
  target: string;
  password: string | null;
  description: string | null;
  allow_write: number;
  context: string;
  created_at: string;
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS connections (
  name TEXT PRIMARY KEY,
  target TEXT NOT NULL,
  password TEXT,
  description TEXT,
  allow_write INTEGER NOT NULL DEFAULT 0,
  context TEXT NOT NULL DEFAULT '[]',
  created_at TEXT NOT NULL
);
`;

/**
 * The credential registry: one SQLite file, whole-file encrypted with SQLCipher settings
 * and a raw 256-bit key, in WAL mode. Names, hosts, users and passwords are all encrypted
 * at rest. A wrong key is refused and the file left untouched.
 */
export class Registry {
  readonly #db: Database;

  private constructor(db: Database) {
    this.#db = db;
  }

  static open(path: string, key: Buffer): Registry {
    const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => Database;
    const isNew = !existsSync(path);
    // Made 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database file's mode.
    if (isNew && process.platform !== 'win32') closeSync(openSync(path, 'a', 0o600));
    const db = new Database(path);
    try {
      db.pragma(`cipher='sqlcipher'`);
      db.pragma('legacy=4');
      db.pragma(`key="x'${key.toString('hex')}'"`);
      // Any read proves the key; with a wrong one SQLite answers "file is not a database".
      db.prepare('SELECT count(*) FROM sqlite_master').get();
    } catch (err) {
      db.close();
      throw new HanactlError(
        'REGISTRY_LOCKED',
        `The registry ${path} cannot be opened with the key from this key source (${(err as Error).message}); it was left untouched. Use the key it was created with.`,
      );
    }
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.exec(SCHEMA);
    db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('schema', '1')`).run();
    if (isNew && process.platform !== 'win32') chmodSync(path, 0o600);
    return new Registry(db);
  }

  list(): ConnectionRecord[] {
    return (this.#db.prepare('SELECT * FROM connections ORDER BY name').all() as Row[]).map(toRecord);
  }

  get(name: string): ConnectionRecord | undefined {
    const row = this.#db.prepare('SELECT * FROM connections WHERE name = ?').get(name) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Adds (or with `replace`, replaces) a connection in one transaction: whole or not at all. */
  put(record: ConnectionRecord, replace: boolean): void {
    const write = this.#db.transaction(() => {
      const exists = this.#db.prepare('SELECT 1 FROM connections WHERE name = ?').get(record.name);
      if (exists && !replace) {
        throw new HanactlError('CONNECTION_EXISTS', `A connection named "${record.name}" already exists; remove it first or add with --replace.`);
      }
      this.#db
        .prepare(
          `INSERT OR REPLACE INTO connections (name, target, password, description, allow_write, context, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          record.name,
          JSON.stringify(record.target),
          record.password ?? null,
          record.description ?? null,
          record.allowWrite ? 1 : 0,
          JSON.stringify(record.context),
          record.createdAt,
        );
    });
    write();
  }

  remove(name: string): boolean {
    return this.#db.prepare('DELETE FROM connections WHERE name = ?').run(name).changes > 0;
  }

  close(): void {
    try {
      this.#db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      this.#db.close();
    }
  }
}

function toRecord(row: Row): ConnectionRecord {
  return makeRecord(
    {
      name: row.name,
      target: JSON.parse(row.target) as Target,
      ...(row.description ? { description: row.description } : {}),
      allowWrite: row.allow_write === 1,
      context: JSON.parse(row.context) as string[],
      createdAt: row.created_at,
    },
    row.password ?? undefined,
  );
}
