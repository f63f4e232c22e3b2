import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditStore } from '../../../../daemon/audit/audit-store.js';
import { entry, tempDir } from './fixtures.js';

const tmp = tempDir();
afterAll(() => tmp.dispose());

/** Every byte of the audit file and its -wal/-shm, as text a grep would see. */
function bytesOf(path: string): string {
  const dir = join(path, '..');
  const base = path.slice(dir.length + 1);
  return readdirSync(dir)
    .filter((f) => f.startsWith(base))
    .map((f) => readFileSync(join(dir, f)).toString('latin1'))
    .join('');
}

const MARK = 'SELECT secret_customer_list_7f3a';

describe('the audit file, encrypted under a key kept in the registry', () => {
  it('holds no statement in clear, on disk or in its WAL, and reads back with the key', () => {
    const path = join(tmp.dir, 'keyed.db');
    const key = randomBytes(32);
    const store = AuditStore.open(path, key);
    store.insert([entry({ statement: MARK })]);
    expect(bytesOf(path)).not.toContain(MARK);
    store.close();
    expect(bytesOf(path)).not.toContain(MARK);
    const reopened = AuditStore.open(path, key);
    expect(reopened.list({ limit: 10 }).map((r) => r.statement)).toEqual([MARK]);
    reopened.close();
    const plain = new Database(path);
    expect(() => plain.prepare('SELECT count(*) FROM sqlite_master').all()).toThrow(/not a database/);
    plain.close();
  });

  it('encrypts a plain file from an earlier version in place, keeping its records, and says so', () => {
    const path = join(tmp.dir, 'plain.db');
    const old = AuditStore.open(path);
    old.insert([entry({ statement: MARK })]);
    old.close();
    expect(bytesOf(path)).toContain(MARK);
    const notes: string[] = [];
    const store = AuditStore.open(path, randomBytes(32), (n) => notes.push(n));
    expect(notes).toEqual([`encrypted the existing audit file ${path} in place`]);
    expect(store.list({ limit: 10 }).map((r) => r.statement)).toEqual([MARK]);
    store.close();
    expect(bytesOf(path)).not.toContain(MARK);
  });

  it('sets aside a file another key encrypted and starts a new one, losing nothing', () => {
    const path = join(tmp.dir, 'other.db');
    const first = AuditStore.open(path, randomBytes(32));
    first.insert([entry({ statement: MARK })]);
    first.close();
    const notes: string[] = [];
    const store = AuditStore.open(path, randomBytes(32), (n) => notes.push(n));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /could not be opened with this registry's audit key; it was moved to .*other\.db\.unreadable-.* and a new one started/,
    );
    expect(store.list({ limit: 10 })).toEqual([]);
    store.insert([entry()]);
    store.close();
    const aside = readdirSync(tmp.dir).filter((f) => f.startsWith('other.db.unreadable-'));
    expect(aside).toHaveLength(1);
    expect(existsSync(join(tmp.dir, aside[0] as string))).toBe(true);
  });
});
