import { chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditStore } from '../../../../daemon/audit/audit-store.js';
import { AuditRecordSchema } from '../../../../shared/schemas.js';
import { entry, tempDir } from './fixtures.js';

const tmp = tempDir();
afterAll(() => tmp.dispose());

describe('AuditStore', () => {
  it('creates a 0600 file in WAL mode', () => {
    const path = join(tmp.dir, 'mode.db');
    const store = AuditStore.open(path);
    store.insert([entry()]);
    if (process.platform !== 'win32') {
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(`${path}-wal`).mode & 0o777).toBe(0o600);
    }
    store.close();
    const db = new Database(path, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('tightens an existing file to 0600', () => {
    const path = join(tmp.dir, 'loose.db');
    AuditStore.open(path).close();
    if (process.platform === 'win32') return;
    chmodSync(path, 0o644);
    AuditStore.open(path).close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('keeps the decision on a write that awaited a person, in a file from before approvals too', () => {
    const path = join(tmp.dir, 'before-approvals.db');
    const old = new Database(path);
    old.exec(`CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, at TEXT NOT NULL, query_id TEXT NOT NULL, session TEXT,
      client TEXT, client_version TEXT, project TEXT, connection TEXT NOT NULL, tool TEXT, statement TEXT NOT NULL,
      param_count INTEGER NOT NULL, rows INTEGER, truncated INTEGER, duration_ms REAL NOT NULL, outcome TEXT NOT NULL,
      error_code TEXT, rule TEXT)`);
    old
      .prepare(
        `INSERT INTO calls (at, query_id, connection, statement, param_count, duration_ms, outcome) VALUES (?, 'old', 'db', 'SELECT 1', 0, 1, 'ok')`,
      )
      .run(new Date().toISOString());
    old.close();
    const store = AuditStore.open(path);
    const denied = { decision: 'denied' as const, by: 'cli' as const, who: 'alice', reason: 'not now', waitedMs: 1200 };
    store.insert([entry({ queryId: 'new', outcome: 'error', errorCode: 'WRITE_DENIED', rows: null, approval: denied })]);
    const [before, after] = store.list({ limit: 10 });
    expect(AuditRecordSchema.parse(before)).toMatchObject({ queryId: 'old', approval: null });
    expect(AuditRecordSchema.parse(after)).toMatchObject({ queryId: 'new', errorCode: 'WRITE_DENIED', approval: denied });
    store.close();
  });

  it('names the signed-in person of a call (subject and issuer), in a file from before them too', () => {
    const path = join(tmp.dir, 'before-approvals.db');
    const store = AuditStore.open(path);
    store.insert([entry({ queryId: 'signed-in', subject: 'alice', issuer: 'https://idp.example/realms/team' })]);
    const records = store.list({ limit: 10 });
    expect(records.map((r) => r.queryId)).toEqual(['old', 'new', 'signed-in']);
    expect(records[0]).not.toHaveProperty('subject');
    expect(AuditRecordSchema.parse(records[2])).toMatchObject({ subject: 'alice', issuer: 'https://idp.example/realms/team' });
    store.close();
  });

  it('round-trips every field, nulls included, as the shared schema describes', () => {
    const store = AuditStore.open(join(tmp.dir, 'fields.db'));
    store.insert([
      entry({ truncated: true, rows: 100 }),
      entry({
        outcome: 'refused',
        errorCode: 'STATEMENT_REFUSED',
        rule: 'write-statement',
        rows: null,
        truncated: null,
        session: null,
        client: null,
        clientVersion: null,
        project: null,
        tool: null,
      }),
    ]);
    const [ok, refused] = store.list({ limit: 10 });
    expect(AuditRecordSchema.parse(ok)).toMatchObject({
      id: 1,
      truncated: true,
      rows: 100,
      outcome: 'ok',
      client: 'test-client',
      clientVersion: '1.0.0',
    });
    expect(AuditRecordSchema.parse(refused)).toMatchObject({
      id: 2,
      outcome: 'refused',
      rule: 'write-statement',
      rows: null,
      truncated: null,
      session: null,
      tool: null,
    });
    store.close();
  });

  it('lists the newest N oldest first, or the next N after an id, with filters', () => {
    const store = AuditStore.open(join(tmp.dir, 'list.db'));
    const base = Date.parse('2024-05-01T00:00:00Z');
    store.insert(
      Array.from({ length: 10 }, (_, i) =>
        entry({
          at: new Date(base + i * 60_000).toISOString(),
          statement: `SELECT ${i}`,
          session: i % 2 ? 'odd' : 'even',
          connection: i < 5 ? 'a' : 'b',
        }),
      ),
    );
    expect(store.list({ limit: 3 }).map((r) => r.statement)).toEqual(['SELECT 7', 'SELECT 8', 'SELECT 9']);
    expect(store.list({ limit: 3, after: 2 }).map((r) => r.id)).toEqual([3, 4, 5]);
    expect(store.list({ limit: 50, session: 'odd' }).map((r) => r.statement)).toEqual([
      'SELECT 1',
      'SELECT 3',
      'SELECT 5',
      'SELECT 7',
      'SELECT 9',
    ]);
    expect(store.list({ limit: 50, connection: 'b', session: 'even' }).map((r) => r.statement)).toEqual(['SELECT 6', 'SELECT 8']);
    expect(store.list({ limit: 50, since: new Date(base + 8 * 60_000) }).map((r) => r.statement)).toEqual(['SELECT 8', 'SELECT 9']);
    store.close();
  });

  it('prunes records older than a cutoff and never reuses their ids', () => {
    const store = AuditStore.open(join(tmp.dir, 'prune.db'));
    store.insert([entry({ at: '2020-01-01T00:00:00.000Z' }), entry({ at: '2020-01-02T00:00:00.000Z' }), entry()]);
    expect(store.pruneBefore(new Date('2021-01-01T00:00:00Z'))).toBe(2);
    expect(store.list({ limit: 10 }).map((r) => r.id)).toEqual([3]);
    store.pruneBefore(new Date(Date.now() + 60_000));
    store.insert([entry()]);
    expect(store.list({ limit: 10 }).map((r) => r.id)).toEqual([4]);
    store.close();
  });
});
