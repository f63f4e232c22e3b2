import { chmodSync, closeSync, existsSync, openSync, renameSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { AuditRecord } from '../../shared/schemas.js';
import { opensWith, rekeyCipher, unlockCipher } from '../registry/cipher.js';

const require = createRequire(import.meta.url);

/** A record before the store gives it an id. */
export type AuditEntry = Omit<AuditRecord, 'id'>;

/** What `list` selects; `after` turns "the newest N" into "the next N after this id". */
export interface AuditFilter {
  readonly session?: string;
  readonly connection?: string;
  readonly since?: Date;
  readonly after?: number;
  readonly limit: number;
}

interface Statement {
  run(...params: unknown[]): { changes: number };
  all(...params: unknown[]): unknown[];
}

interface Database {
  pragma(sql: string): unknown;
  exec(sql: string): void;
  prepare(sql: string): Statement;
  transaction<A extends unknown[]>(fn: (...args: A) => void): (...args: A) => void;
  close(): void;
}

interface Row {
  id: number;
  at: string;
  query_id: string;
  session: string | null;
  client: string | null;
  client_version: string | null;
  project: string | null;
  connection: string;
  tool: string | null;
  statement: string;
  param_count: number;
  rows: number | null;
  truncated: number | null;
  duration_ms: number;
  outcome: AuditRecord['outcome'];
  error_code: string | null;
  rule: string | null;
  approval: string | null;
  subject?: string | null;
  issuer?: string | null;
}

// AUTOINCREMENT: an id is never reused after a prune, so `--follow`'s cursor stays valid.
const SCHEMA = `
CREATE TABLE IF NOT EXISTS calls (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  at TEXT NOT NULL,
  query_id TEXT NOT NULL,
  session TEXT,
  client TEXT,
  client_version TEXT,
  project TEXT,
  connection TEXT NOT NULL,
  tool TEXT,
  statement TEXT NOT NULL,
  param_count INTEGER NOT NULL,
  rows INTEGER,
  truncated INTEGER,
  duration_ms REAL NOT NULL,
  outcome TEXT NOT NULL,
  error_code TEXT,
  rule TEXT,
  approval TEXT,
  subject TEXT,
  issuer TEXT
);
CREATE INDEX IF NOT EXISTS calls_at ON calls (at);
CREATE INDEX IF NOT EXISTS calls_session ON calls (session, id);
CREATE INDEX IF NOT EXISTS calls_connection ON calls (connection, id);
`;

const INSERT = `INSERT INTO calls (at, query_id, session, client, client_version, project, connection, tool, statement,
  param_count, rows, truncated, duration_ms, outcome, error_code, rule, approval, subject, issuer)
  VALUES (@at, @queryId, @session, @client, @clientVersion, @project, @connection, @tool, @statement,
  @paramCount, @rows, @truncated, @durationMs, @outcome, @errorCode, @rule, @approval, @subject, @issuer)`;

/**
 * The audit trail on disk: one SQLite file (statements, never secrets), encrypted under a key kept
 * in the registry, mode 0600, WAL.
 * Writes come in batches, each one transaction; timestamps are ISO 8601 UTC, so text order is time order.
 */
export class AuditStore {
  readonly #db: Database;
  readonly #insert: Statement;

  private constructor(db: Database) {
    this.#db = db;
    this.#insert = db.prepare(INSERT);
  }

  /**
   * Opens (or creates, 0600) the audit database at `path`. With a `key` the file is encrypted
   * (SQLCipher, like the registry): a plain file left by an earlier version is encrypted in place,
   * keeping its records; a file this key cannot open (a registry moved from another machine) is
   * set aside as `<path>.unreadable-<time>` and a new one started. `onNote` hears of either.
   */
  static open(path: string, key?: Buffer, onNote?: (note: string) => void): AuditStore {
    const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => Database;
    const create = () => {
      // Made 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database file's mode.
      if (!existsSync(path) && process.platform !== 'win32') closeSync(openSync(path, 'a', 0o600));
      if (process.platform !== 'win32') chmodSync(path, 0o600);
    };
    create();
    if (key && !opensWith(path, key)) {
      if (opensWith(path, undefined)) {
        const plain = new Database(path);
        try {
          plain.pragma('journal_mode = DELETE'); // a rekey refuses to run in WAL mode
          rekeyCipher(plain, key);
        } finally {
          plain.close();
        }
        onNote?.(`encrypted the existing audit file ${path} in place`);
      } else {
        const aside = `${path}.unreadable-${new Date().toISOString().replace(/[:.]/g, '-')}`;
        renameSync(path, aside);
        for (const suffix of ['-wal', '-shm']) rmSync(`${path}${suffix}`, { force: true });
        create();
        onNote?.(`the audit file could not be opened with this registry's audit key; it was moved to ${aside} and a new one started`);
      }
    }
    const db = new Database(path);
    try {
      if (key) unlockCipher(db, key);
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
      db.exec(SCHEMA);
      // A file from before approvals: the decision column is added, its records keep null.
      const columns = db.prepare('PRAGMA table_info(calls)').all() as { name: string }[];
      if (!columns.some((c) => c.name === 'approval')) db.exec('ALTER TABLE calls ADD COLUMN approval TEXT');
      // A file from before signed-in callers: who made a call is added, older records keep null.
      if (!columns.some((c) => c.name === 'subject')) db.exec('ALTER TABLE calls ADD COLUMN subject TEXT; ALTER TABLE calls ADD COLUMN issuer TEXT');
    } catch (err) {
      db.close();
      throw err;
    }
    return new AuditStore(db);
  }

  /** Writes `entries` in one transaction. */
  insert(entries: readonly AuditEntry[]): void {
    if (entries.length === 0) return;
    const write = this.#db.transaction((batch: readonly AuditEntry[]) => {
      for (const e of batch)
        this.#insert.run({
          ...e,
          truncated: e.truncated === null ? null : e.truncated ? 1 : 0,
          approval: e.approval ? JSON.stringify(e.approval) : null,
          subject: e.subject ?? null,
          issuer: e.issuer ?? null,
        });
    });
    write(entries);
  }

  /** Matching records, oldest first: the newest `limit`, or the first `limit` after `after`. */
  list(filter: AuditFilter): AuditRecord[] {
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (condition: string, value: unknown) => {
      where.push(condition);
      params.push(value);
    };
    if (filter.session !== undefined) add('session = ?', filter.session);
    if (filter.connection !== undefined) add('connection = ?', filter.connection);
    if (filter.since !== undefined) add('at >= ?', filter.since.toISOString());
    if (filter.after !== undefined) add('id > ?', filter.after);
    const clause = where.length > 0 ? `WHERE ${where.join(' AND ')}` : '';
    const order = filter.after !== undefined ? 'ASC' : 'DESC';
    const rows = this.#db.prepare(`SELECT * FROM calls ${clause} ORDER BY id ${order} LIMIT ?`).all(...params, filter.limit) as Row[];
    if (order === 'DESC') rows.reverse();
    return rows.map(toRecord);
  }

  /** Deletes records older than `cutoff`; returns how many. */
  pruneBefore(cutoff: Date): number {
    return this.#db.prepare('DELETE FROM calls WHERE at < ?').run(cutoff.toISOString()).changes;
  }

  close(): void {
    this.#db.close();
  }
}

function toRecord(r: Row): AuditRecord {
  return {
    id: r.id,
    at: r.at,
    queryId: r.query_id,
    session: r.session,
    client: r.client,
    clientVersion: r.client_version,
    project: r.project,
    connection: r.connection,
    tool: r.tool,
    statement: r.statement,
    paramCount: r.param_count,
    rows: r.rows,
    truncated: r.truncated === null ? null : r.truncated === 1,
    durationMs: r.duration_ms,
    outcome: r.outcome,
    errorCode: r.error_code,
    rule: r.rule,
    approval: r.approval ? (JSON.parse(r.approval) as AuditRecord['approval']) : null,
    ...(r.subject ? { subject: r.subject, issuer: r.issuer ?? null } : {}),
  };
}
