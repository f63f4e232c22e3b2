import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cliCommand } from '../../shared/cli-command.js';
import type { Target } from '../../shared/connection-url.js';
import { HanactlError } from '../../shared/errors.js';
import { newContextKey } from '../engines/signed-context.js';
import { opensWith, rekeyCipher, unlockCipher } from './cipher.js';
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
  max_result_bytes: number | null;
  context_key: string | null;
  signed_context: number | null;
  curated_only: number | null;
  max_cost: number | null;
  approve_writes: number | null;
  approval_timeout_seconds: number | null;
  context_claims: string | null;
}

/** A curated tool as kept: its parameters as JSON. */
export interface CuratedRow {
  readonly connection: string;
  readonly name: string;
  readonly description: string;
  readonly sql: string;
  readonly parameters: string;
  readonly kind: 'read' | 'write';
  readonly created_at: string;
}

interface TrustRow {
  path: string;
  created_at: string;
}

/** A connection a signed-in caller may use: `principal` is a subject, a group, or `*`. */
export interface GrantRow {
  readonly connection: string;
  readonly principal: string;
  readonly created_at: string;
}

/** A bearer token for MCP over HTTP, as kept: its sha256, never the token. */
export interface TokenRow {
  readonly label: string;
  readonly hash: string;
  readonly connection: string | null;
  readonly created_at: string;
  readonly last_used_at: string | null;
  /** The context values the token is bound to, as JSON; null when its holder gives them on the URL. */
  readonly context?: string | null;
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
CREATE TABLE IF NOT EXISTS connection_limits (name TEXT PRIMARY KEY, max_result_bytes INTEGER);
CREATE TABLE IF NOT EXISTS context_keys (name TEXT PRIMARY KEY, context_key TEXT NOT NULL, signed_context INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS connection_modes (name TEXT PRIMARY KEY, curated_only INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS connection_costs (name TEXT PRIMARY KEY, max_cost REAL NOT NULL);
CREATE TABLE IF NOT EXISTS connection_approvals (name TEXT PRIMARY KEY, approve_writes INTEGER NOT NULL DEFAULT 0, approval_timeout_seconds INTEGER);
CREATE TABLE IF NOT EXISTS connection_context_claims (name TEXT PRIMARY KEY, context_claims TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS curated_tools (
  connection TEXT NOT NULL,
  name TEXT NOT NULL,
  position INTEGER NOT NULL,
  description TEXT NOT NULL,
  sql TEXT NOT NULL,
  parameters TEXT NOT NULL,
  kind TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (connection, name)
);
CREATE TABLE IF NOT EXISTS trusted_folders (path TEXT PRIMARY KEY, created_at TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS grants (
  connection TEXT NOT NULL,
  principal TEXT NOT NULL,
  created_at TEXT NOT NULL,
  PRIMARY KEY (connection, principal)
);
CREATE TABLE IF NOT EXISTS token_contexts (label TEXT PRIMARY KEY, context TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tokens (
  label TEXT PRIMARY KEY,
  hash TEXT NOT NULL UNIQUE,
  connection TEXT,
  created_at TEXT NOT NULL,
  last_used_at TEXT
);
`;

/** A connection row with the limits a person set for it (kept in their own table). */
const SELECT_RECORD =
  'SELECT * FROM connections LEFT JOIN connection_limits USING (name) LEFT JOIN context_keys USING (name) LEFT JOIN connection_modes USING (name) LEFT JOIN connection_costs USING (name) LEFT JOIN connection_approvals USING (name) LEFT JOIN connection_context_claims USING (name)';

/**
 * The credential registry: one SQLite file, whole-file encrypted with SQLCipher settings
 * and a raw 256-bit key, in WAL mode. Names, hosts, users and passwords are all encrypted
 * at rest. A wrong key is refused and the file left untouched.
 */
export class Registry {
  readonly #db: Database;
  readonly #path: string;

  private constructor(db: Database, path: string) {
    this.#db = db;
    this.#path = path;
  }

  static open(path: string, key: Buffer): Registry {
    const Database = require('better-sqlite3-multiple-ciphers') as new (path: string) => Database;
    const isNew = !existsSync(path);
    // Made 0600 before SQLite opens it: SQLite gives the -wal and -shm files the database file's mode.
    if (isNew && process.platform !== 'win32') closeSync(openSync(path, 'a', 0o600));
    const db = new Database(path);
    try {
      unlockCipher(db, key);
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
    return new Registry(db, path);
  }

  /**
   * True when `key` opens the registry file at `path`, through a connection of its own that
   * only reads. `thorough` reads every page (`PRAGMA quick_check`), not just the first.
   */
  static opensWith(path: string, key: Buffer, thorough = false): boolean {
    return opensWith(path, key, thorough);
  }

  /**
   * Re-encrypts the whole file under a new key (`PRAGMA rekey`, one transaction), then proves
   * a fresh connection reads every page with it. SQLite3 Multiple Ciphers refuses to rekey in
   * WAL mode, so the journal is DELETE for the rekey and WAL again after, whatever happens.
   */
  rekey(key: Buffer): void {
    const mode = this.#db.pragma('journal_mode = DELETE', { simple: true });
    if (mode !== 'delete')
      throw new HanactlError(
        'INTERNAL',
        `The registry could not leave WAL mode for the rekey (journal mode ${String(mode)}); nothing was changed.`,
      );
    try {
      rekeyCipher(this.#db, key);
      if (!Registry.opensWith(this.#path, key, true)) {
        throw new HanactlError('REGISTRY_LOCKED', `The registry ${this.#path} was rekeyed but does not read back with the new key.`);
      }
    } finally {
      this.#db.pragma('journal_mode = WAL');
    }
  }

  /** The encrypted file's bytes, complete: the WAL is checkpointed into it first. */
  snapshot(): Buffer {
    const [result] = this.#db.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    if (result && result.busy !== 0) throw new HanactlError('INTERNAL', 'The registry is busy; try again in a moment.');
    return readFileSync(this.#path);
  }

  list(): ConnectionRecord[] {
    return (this.#db.prepare(`${SELECT_RECORD} ORDER BY name`).all() as Row[]).map(toRecord);
  }

  get(name: string): ConnectionRecord | undefined {
    const row = this.#db.prepare(`${SELECT_RECORD} WHERE name = ?`).get(name) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Sets (or with null, clears) the byte cap of one tool result on a connection; kept across `--replace`. */
  setResultLimit(name: string, maxResultBytes: number | null): void {
    if (maxResultBytes === null) this.#db.prepare('DELETE FROM connection_limits WHERE name = ?').run(name);
    else this.#db.prepare('INSERT OR REPLACE INTO connection_limits (name, max_result_bytes) VALUES (?, ?)').run(name, maxResultBytes);
  }

  /**
   * Switches signed context values on or off for a connection. The signing key is made the first
   * time they are switched on and kept after (off and on again, the installed function still
   * verifies); kept across `--replace`, gone with `remove`.
   */
  setSignedContext(name: string, on: boolean): void {
    const write = this.#db.transaction(() => {
      const changed = this.#db.prepare('UPDATE context_keys SET signed_context = ? WHERE name = ?').run(on ? 1 : 0, name).changes;
      if (changed === 0 && on) {
        this.#db
          .prepare('INSERT INTO context_keys (name, context_key, signed_context) VALUES (?, ?, 1)')
          .run(name, newContextKey().toString('hex'));
      }
    });
    write();
  }

  /** Sets whether a connection's sessions get only its curated tools (no run_query); kept across `--replace`. */
  setCuratedOnly(name: string, curatedOnly: boolean): void {
    if (!curatedOnly) this.#db.prepare('DELETE FROM connection_modes WHERE name = ?').run(name);
    else this.#db.prepare('INSERT OR REPLACE INTO connection_modes (name, curated_only) VALUES (?, 1)').run(name);
  }

  /** Sets (or with null, clears) the plan cost above which a connection's reads are refused; kept across `--replace`. */
  setCostLimit(name: string, maxCost: number | null): void {
    if (maxCost === null) this.#db.prepare('DELETE FROM connection_costs WHERE name = ?').run(name);
    else this.#db.prepare('INSERT OR REPLACE INTO connection_costs (name, max_cost) VALUES (?, ?)').run(name, maxCost);
  }

  /**
   * Sets whether each write on a connection waits for a person's approval, and how long it may
   * wait (null: the default); what is not given stays. Kept across `--replace`, gone with `remove`.
   */
  setApproval(name: string, changes: { approveWrites?: boolean; timeoutSeconds?: number | null }): void {
    const write = this.#db.transaction(() => {
      this.#db.prepare('INSERT OR IGNORE INTO connection_approvals (name) VALUES (?)').run(name);
      if (changes.approveWrites !== undefined)
        this.#db.prepare('UPDATE connection_approvals SET approve_writes = ? WHERE name = ?').run(changes.approveWrites ? 1 : 0, name);
      if (changes.timeoutSeconds !== undefined)
        this.#db.prepare('UPDATE connection_approvals SET approval_timeout_seconds = ? WHERE name = ?').run(changes.timeoutSeconds, name);
      this.#db
        .prepare('DELETE FROM connection_approvals WHERE name = ? AND approve_writes = 0 AND approval_timeout_seconds IS NULL')
        .run(name);
    });
    write();
  }

  /**
   * Sets which token claim gives each context name to signed-in callers (an empty map clears
   * them); kept across `--replace`, gone with `remove`.
   */
  setContextClaims(name: string, claims: Readonly<Record<string, string>>): void {
    if (Object.keys(claims).length === 0) this.#db.prepare('DELETE FROM connection_context_claims WHERE name = ?').run(name);
    else
      this.#db
        .prepare('INSERT OR REPLACE INTO connection_context_claims (name, context_claims) VALUES (?, ?)')
        .run(name, JSON.stringify(claims));
  }

  /** Curated tools, of one connection or all, in the order they were imported. */
  listCurated(connection?: string): CuratedRow[] {
    if (connection === undefined)
      return this.#db.prepare('SELECT * FROM curated_tools ORDER BY connection, position').all() as CuratedRow[];
    return this.#db.prepare('SELECT * FROM curated_tools WHERE connection = ? ORDER BY position').all(connection) as CuratedRow[];
  }

  /**
   * Adds a connection's curated tools in one transaction (with `replace`, instead of the ones it
   * had). A name the connection has already is refused, naming it; nothing is written then.
   */
  putCurated(connection: string, rows: readonly Omit<CuratedRow, 'connection'>[], replace: boolean): void {
    const write = this.#db.transaction(() => {
      if (replace) this.#db.prepare('DELETE FROM curated_tools WHERE connection = ?').run(connection);
      const taken = this.#db.prepare('SELECT 1 FROM curated_tools WHERE connection = ? AND name = ?');
      const next = this.#db.prepare('SELECT coalesce(max(position), -1) + 1 AS n FROM curated_tools WHERE connection = ?');
      const insert = this.#db.prepare(
        'INSERT INTO curated_tools (connection, name, position, description, sql, parameters, kind, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
      );
      for (const row of rows) {
        if (taken.get(connection, row.name))
          throw new HanactlError(
            'CONNECTION_EXISTS',
            `The connection "${connection}" has a curated tool named "${row.name}" already; remove it first (\`${cliCommand()} tools remove ${connection} ${row.name}\`) or import with --replace to swap the whole set.`,
          );
        const { n } = next.get(connection) as { n: number };
        insert.run(connection, row.name, n, row.description, row.sql, row.parameters, row.kind, row.created_at);
      }
    });
    write();
  }

  removeCurated(connection: string, name: string): boolean {
    return this.#db.prepare('DELETE FROM curated_tools WHERE connection = ? AND name = ?').run(connection, name).changes > 0;
  }

  /** Adds (or with `replace`, replaces) a connection in one transaction: whole or not at all. */
  put(record: ConnectionRecord, replace: boolean): void {
    const write = this.#db.transaction(() => {
      const exists = this.#db.prepare('SELECT 1 FROM connections WHERE name = ?').get(record.name);
      if (exists && !replace) {
        throw new HanactlError(
          'CONNECTION_EXISTS',
          `A connection named "${record.name}" already exists; remove it first or add with --replace.`,
        );
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
    this.#db.prepare('DELETE FROM connection_limits WHERE name = ?').run(name);
    this.#db.prepare('DELETE FROM context_keys WHERE name = ?').run(name);
    this.#db.prepare('DELETE FROM connection_modes WHERE name = ?').run(name);
    this.#db.prepare('DELETE FROM connection_costs WHERE name = ?').run(name);
    this.#db.prepare('DELETE FROM connection_approvals WHERE name = ?').run(name);
    this.#db.prepare('DELETE FROM connection_context_claims WHERE name = ?').run(name);
    this.#db.prepare('DELETE FROM curated_tools WHERE connection = ?').run(name);
    // A connection registered later under the same name starts with no grants.
    this.#db.prepare('DELETE FROM grants WHERE connection = ?').run(name);
    return this.#db.prepare('DELETE FROM connections WHERE name = ?').run(name).changes > 0;
  }

  /** Folders a person trusted (`hanactl trust`), by real path. */
  listTrusted(): { path: string; createdAt: string }[] {
    const rows = this.#db.prepare('SELECT path, created_at FROM trusted_folders ORDER BY path').all() as TrustRow[];
    return rows.map((r) => ({ path: r.path, createdAt: r.created_at }));
  }

  /** Adds a trusted folder; false when it was trusted already. */
  addTrusted(path: string, createdAt: string): boolean {
    return this.#db.prepare('INSERT OR IGNORE INTO trusted_folders (path, created_at) VALUES (?, ?)').run(path, createdAt).changes > 0;
  }

  removeTrusted(path: string): boolean {
    return this.#db.prepare('DELETE FROM trusted_folders WHERE path = ?').run(path).changes > 0;
  }

  /** Who among signed-in callers may use which connection (`hanactl grant`). */
  listGrants(): GrantRow[] {
    return this.#db.prepare('SELECT * FROM grants ORDER BY connection, principal').all() as GrantRow[];
  }

  /** Adds a grant; false when it exists. */
  addGrant(row: GrantRow): boolean {
    const sql = 'INSERT OR IGNORE INTO grants (connection, principal, created_at) VALUES (?, ?, ?)';
    return this.#db.prepare(sql).run(row.connection, row.principal, row.created_at).changes > 0;
  }

  removeGrant(connection: string, principal: string): boolean {
    return this.#db.prepare('DELETE FROM grants WHERE connection = ? AND principal = ?').run(connection, principal).changes > 0;
  }

  /** MCP over HTTP bearer tokens (`hanactl token`), by label; each row holds the token's sha256 only. */
  listTokens(): TokenRow[] {
    return this.#db.prepare('SELECT * FROM tokens LEFT JOIN token_contexts USING (label) ORDER BY label').all() as TokenRow[];
  }

  /** The token whose sha256 is `hash`, if any. */
  findToken(hash: string): TokenRow | undefined {
    return this.#db.prepare('SELECT * FROM tokens LEFT JOIN token_contexts USING (label) WHERE hash = ?').get(hash) as
      | TokenRow
      | undefined;
  }

  /** Adds a token; false when the label is taken. */
  addToken(row: Omit<TokenRow, 'last_used_at'>): boolean {
    const write = this.#db.transaction(() => {
      const sql = 'INSERT OR IGNORE INTO tokens (label, hash, connection, created_at) VALUES (?, ?, ?, ?)';
      if (this.#db.prepare(sql).run(row.label, row.hash, row.connection, row.created_at).changes === 0) return false;
      this.#db.prepare('DELETE FROM token_contexts WHERE label = ?').run(row.label);
      if (row.context) this.#db.prepare('INSERT INTO token_contexts (label, context) VALUES (?, ?)').run(row.label, row.context);
      return true;
    });
    return write();
  }

  removeToken(label: string): boolean {
    this.#db.prepare('DELETE FROM token_contexts WHERE label = ?').run(label);
    return this.#db.prepare('DELETE FROM tokens WHERE label = ?').run(label).changes > 0;
  }

  touchToken(label: string, at: string): void {
    this.#db.prepare('UPDATE tokens SET last_used_at = ? WHERE label = ?').run(at, label);
  }

  /**
   * The key of the audit trail's file: 32 random bytes made on first use and kept here, so the
   * audit file is as unreadable as the registry without the registry key, and rotating that key
   * (which re-encrypts this file) leaves the audit file as it is.
   */
  auditKey(): Buffer {
    const read = () => (this.#db.prepare(`SELECT value FROM meta WHERE key = 'audit_key'`).get() as { value: string } | undefined)?.value;
    let hex = read();
    if (hex === undefined) {
      this.#db.prepare(`INSERT OR IGNORE INTO meta (key, value) VALUES ('audit_key', ?)`).run(randomBytes(32).toString('hex'));
      hex = read() as string;
    }
    return Buffer.from(hex, 'hex');
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
      ...(row.max_result_bytes !== null && row.max_result_bytes !== undefined ? { maxResultBytes: row.max_result_bytes } : {}),
      ...(row.signed_context === 1 ? { signedContext: true } : {}),
      ...(row.curated_only === 1 ? { curatedOnly: true } : {}),
      ...(row.max_cost !== null && row.max_cost !== undefined ? { maxCost: row.max_cost } : {}),
      ...(row.approve_writes === 1 ? { approveWrites: true } : {}),
      ...(typeof row.approval_timeout_seconds === 'number' ? { approvalTimeoutSeconds: row.approval_timeout_seconds } : {}),
      ...(row.context_claims ? { contextClaims: JSON.parse(row.context_claims) as Record<string, string> } : {}),
    },
    row.password ?? undefined,
    row.context_key ? Buffer.from(row.context_key, 'hex') : undefined,
  );
}
