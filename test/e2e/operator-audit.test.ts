import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3-multiple-ciphers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { unlockCipher } from '../../daemon/registry/cipher.js';
import { AuditListSchema, type AuditRecord, AuditRecordSchema, SessionListSchema } from '../../shared/schemas.js';
import { PG_URL, serverAvailable } from '../helpers/engines.js';
import { BIN, TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';

const available = await serverAvailable('postgres');
const SECRET = `planted-${randomBytes(9).toString('hex')}`;
const MARK = `audit_mark_${randomBytes(4).toString('hex')}`;

/** The audit file opened as the daemon opens it: with the audit key kept in the (encrypted) registry. */
function openAuditFile(home: TestHome): InstanceType<typeof Database> {
  const registry = new Database(join(home.dir, 'registry.db'), { readonly: true });
  unlockCipher(registry, Buffer.from(home.env.HANACTL_REGISTRY_KEY as string, 'base64'));
  const row = registry.prepare(`SELECT value FROM meta WHERE key = 'audit_key'`).get() as { value: string };
  registry.close();
  const db = new Database(join(home.dir, 'audit.db'));
  unlockCipher(db, Buffer.from(row.value, 'hex'));
  return db;
}

const auditJson = async (home: TestHome, args: string[] = []): Promise<AuditRecord[]> =>
  AuditListSchema.parse(JSON.parse((await home.ok(['audit', '--json', ...args])).stdout)).records;

describe.skipIf(!available)('the audit trail after a real session through the shim (PostgreSQL)', () => {
  const home = new TestHome();
  const project = mkdtempSync(join(tmpdir(), 'hanactl-project-'));
  let shim: ShimHandle;
  let session: string;

  beforeAll(async () => {
    await home.ok(['add', '--no-test', 'pg', PG_URL, '--password-stdin'], { input: `${SECRET}\n` });
    await home.ok(['add', '--no-test', 'pg2', PG_URL, '--password-stdin'], { input: `${SECRET}\n` });
    shim = await startShim(home.env, ['--connection', 'pg', '--project', project], 'audit-client');
    const calls: [Record<string, unknown>, boolean][] = [
      [{ sql: `SELECT $1::text AS ${MARK}, $2::int AS n`, params: ['param-value-not-recorded', 7] }, false],
      [{ sql: 'SELECT g FROM generate_series(1, 50) g', maxRows: 5 }, false],
      [{ sql: 'SELECT * FROM no_such_table_for_audit' }, true],
      [{ sql: 'DELETE FROM pg_class' }, true],
      [{ sql: 'SELECT 2 AS other', connection: 'pg2' }, false],
    ];
    for (const [args, failing] of calls) {
      const result = await shim.call('run_query', args);
      expect(Boolean(result.isError), textOf(result)).toBe(failing);
    }
    const { sessions } = SessionListSchema.parse(JSON.parse((await home.ok(['sessions', '--json'])).stdout));
    const mine = sessions.find((s) => s.client.name === 'audit-client');
    expect(mine).toMatchObject({ client: { name: 'audit-client', version: '1.0.0' }, project, connection: 'pg' });
    expect(mine?.calls).toBeGreaterThanOrEqual(calls.length);
    session = mine?.id ?? '';
  });

  afterAll(async () => {
    await shim?.close();
    await home.dispose();
    rmSync(project, { recursive: true, force: true });
  });

  it('has every call with who made it, what ran and how it ended', async () => {
    const records = await auditJson(home, ['--session', session]);
    expect(records).toHaveLength(5);
    const common = { session, client: 'audit-client', clientVersion: '1.0.0', project, tool: 'run_query' };
    expect(records[0]).toMatchObject({
      ...common,
      connection: 'pg',
      paramCount: 2,
      rows: 1,
      truncated: false,
      outcome: 'ok',
      errorCode: null,
      rule: null,
    });
    expect(records[0]?.statement).toContain(MARK);
    expect(records[1]).toMatchObject({
      ...common,
      statement: 'SELECT g FROM generate_series(1, 50) g',
      paramCount: 0,
      rows: 5,
      truncated: true,
      outcome: 'ok',
    });
    expect(records[2]).toMatchObject({ ...common, outcome: 'error', errorCode: 'QUERY_FAILED', rows: null, truncated: null });
    expect(records[3]).toMatchObject({ ...common, statement: 'DELETE FROM pg_class', outcome: 'refused', errorCode: 'STATEMENT_REFUSED' });
    expect(records[3]?.rule).toEqual(expect.any(String));
    expect(records[4]).toMatchObject({ ...common, connection: 'pg2', outcome: 'ok', rows: 1 });
    for (const r of records) {
      expect(r.durationMs).toBeGreaterThanOrEqual(0);
      expect(Date.now() - Date.parse(r.at)).toBeLessThan(5 * 60_000);
      expect(r.queryId).toMatch(/^[0-9a-f]{8}$/);
    }
    expect(JSON.stringify(records)).not.toContain('param-value-not-recorded');
  });

  it('filters by connection, time and count', async () => {
    expect((await auditJson(home, ['--connection', 'pg2'])).map((r) => r.statement)).toEqual(['SELECT 2 AS other']);
    expect(await auditJson(home, ['--since', '1h', '--limit', '2'])).toHaveLength(2);
    expect(await auditJson(home, ['--since', new Date(Date.now() + 3_600_000).toISOString()])).toEqual([]);
    expect(await auditJson(home, ['--session', 'no-such-session'])).toEqual([]);
  });

  it('prints a table for people, and refuses bad options with exit 2', async () => {
    const table = (await home.ok(['audit', '--session', session])).stdout;
    expect(table).toMatch(/^time\s+\| session\s+\| client/);
    expect(table).toMatch(/refused \S+/);
    expect(table).toMatch(/error QUERY_FAILED/);
    expect(table).toContain('audit-client 1.0.0');
    for (const bad of [
      ['--since', 'yesterday'],
      ['--limit', '0'],
      ['--limit', 'x'],
    ]) {
      const result = await home.run(['audit', ...bad]);
      expect(result.code, bad.join(' ')).toBe(2);
    }
  });

  it('--follow prints new records as they arrive and stops cleanly on Ctrl-C', async () => {
    const child = spawn(process.execPath, [BIN, 'audit', '--follow', '--json', '--limit', '1'], {
      env: home.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const lines = () => out.split('\n').filter(Boolean);
    const waitFor = async (n: number) => {
      const deadline = Date.now() + 10_000;
      while (lines().length < n && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };
    await waitFor(1);
    expect(lines()).toHaveLength(1);
    await shim.call('run_query', { sql: 'SELECT 3 AS followed' });
    await waitFor(2);
    const followed = AuditRecordSchema.parse(JSON.parse(lines()[1] ?? 'null'));
    expect(followed).toMatchObject({ statement: 'SELECT 3 AS followed', outcome: 'ok', session });
    const exited = new Promise<number | null>((r) => child.on('close', r));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });

  it('keeps no secret: the audit files are 0600 and encrypted, and the planted password is not in what they record', async () => {
    await home.ok(['daemon', 'stop']);
    const files = readdirSync(home.dir).filter((f) => f.startsWith('audit.db'));
    expect(files).toContain('audit.db');
    let bytes = '';
    for (const f of files) {
      if (process.platform !== 'win32') expect(statSync(join(home.dir, f)).mode & 0o777, f).toBe(0o600);
      bytes += readFileSync(join(home.dir, f)).toString('latin1');
    }
    // Encrypted: not even the statements can be read from the files without the registry's key...
    expect(bytes).not.toContain(MARK);
    expect(bytes).not.toContain(SECRET);
    expect(bytes).not.toContain('param-value-not-recorded');
    // ...which does read them, and they hold neither the password nor a parameter's value.
    const db = openAuditFile(home);
    const recorded = JSON.stringify(db.prepare('SELECT * FROM calls').all());
    db.close();
    expect(recorded).toContain(MARK);
    expect(recorded).not.toContain(SECRET);
    expect(recorded).not.toContain('param-value-not-recorded');
  });

  it('--audit-days is remembered and prunes older records when the daemon starts', async () => {
    const db = openAuditFile(home);
    db.prepare(
      `INSERT INTO calls (at, query_id, connection, statement, param_count, duration_ms, outcome) VALUES (?, 'old', 'pg', 'SELECT old', 0, 1, 'ok')`,
    ).run(new Date(Date.now() - 10 * 86_400_000).toISOString());
    db.close();
    await home.ok(['daemon', 'start', '--audit-days', '7']);
    expect(JSON.parse(readFileSync(join(home.dir, 'config.json'), 'utf8'))).toMatchObject({ auditDays: 7 });
    const records = await auditJson(home, ['--limit', '1000']);
    expect(records.map((r) => r.statement)).not.toContain('SELECT old');
    expect(records.length).toBeGreaterThanOrEqual(6);
    expect((await home.run(['daemon', 'start', '--audit-days', '0'])).code).toBe(2);
  });
});
