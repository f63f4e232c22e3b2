import { readFileSync } from 'node:fs';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { READ, sqliteTestFile } from './fixtures.js';

const fx = sqliteTestFile((db) => db.exec('CREATE TABLE t (n INTEGER); INSERT INTO t VALUES (1);'));
afterAll(() => fx.cleanup());

const PLANTED = {
  HANACTL_REGISTRY_KEY: 'cGxhbnRlZC1yZWdpc3RyeS1rZXktZm9yLWEtdGVzdA==',
  PGPASSWORD: 'planted-pg',
  AWS_SECRET_ACCESS_KEY: 'planted-aws',
};
const saved = new Map<string, string | undefined>();

afterEach(() => {
  for (const [name, value] of saved) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
});

/** The variables a process was started with (`/proc/<pid>/environ`). */
function environmentOf(pid: number): Record<string, string> {
  const entries = readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').filter(Boolean);
  return Object.fromEntries(entries.map((e) => [e.slice(0, e.indexOf('=')), e.slice(e.indexOf('=') + 1)]));
}

describe.skipIf(process.platform !== 'linux')('the SQLite host process environment', () => {
  it('carries none of the daemon’s secrets, only what SQLite and Node need', async () => {
    for (const [name, value] of Object.entries(PLANTED)) {
      saved.set(name, process.env[name]);
      process.env[name] = value;
    }
    const conn = await fx.connect();
    await expect(conn.execute('SELECT n FROM t', [], READ)).resolves.toMatchObject({ rows: [{ n: 1 }] });
    const env = environmentOf(conn.pid as number);
    for (const name of Object.keys(PLANTED)) expect(env).not.toHaveProperty(name);
    const text = JSON.stringify(env);
    for (const value of Object.values(PLANTED)) expect(text).not.toContain(value);
    expect(Object.keys(env).every((name) => /^(NODE_CHANNEL_\w+|NODE_UNIQUE_ID|HANACTL_HOME|TMPDIR|SQLITE_TMPDIR|TZ)$/.test(name))).toBe(
      true,
    );
  });
});
