import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../daemon/audit/audit-log.js';
import { AuditStore } from '../../../daemon/audit/audit-store.js';
import { loadDriverFactory } from '../../../daemon/drivers/index.js';
import { createApp } from '../../../daemon/http/app.js';
import { createStatementPolicy } from '../../../daemon/policy-wiring.js';
import { DEFAULT_POOL_OPTIONS } from '../../../daemon/pools/pool.js';
import { PoolManager } from '../../../daemon/pools/pool-manager.js';
import { CallTracker } from '../../../daemon/queries/call-tracker.js';
import { QueryService } from '../../../daemon/query/query-service.js';
import { ConnectionService } from '../../../daemon/registry/connection-service.js';
import { Registry } from '../../../daemon/registry/registry.js';
import { SessionTable } from '../../../daemon/sessions/session-table.js';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../../shared/client-header.js';
import { AuditListSchema, RunningQueryListSchema, SessionInfoSchema } from '../../../shared/schemas.js';
import { tempDir } from './fixtures.js';

const tmp = tempDir();
const registry = Registry.open(join(tmp.dir, 'registry.db'), randomBytes(32));
const pools = new PoolManager({ pool: DEFAULT_POOL_OPTIONS, connectTimeoutMs: 2000, maxPools: 4, loadDriverFactory });
const connections = new ConnectionService(registry, pools);
const queries = new QueryService({
  resolve: (n) => connections.resolve(n),
  poolFor: (r) => pools.poolFor(r),
  policy: createStatementPolicy(),
});
const audit = new AuditLog(AuditStore.open(join(tmp.dir, 'audit.db')), { flushIntervalMillis: 60_000 });
const sessions = new SessionTable();
const app = createApp({
  health: () => ({
    name: 'hanactl',
    version: 't',
    pid: 1,
    uptimeMs: 0,
    keySource: 'env',
    socket: 's',
    home: tmp.dir,
    node: process.version,
  }),
  connections,
  queries,
  sessions,
  pools,
  calls: new CallTracker({ audit }),
  audit,
  shutdown: () => {},
});

const call = async (method: string, path: string, body?: unknown) => {
  const res = await app.request(path, {
    method,
    headers: { 'content-type': 'application/json', [CLIENT_HEADER]: CLI_CLIENT_NAME },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
};

describe('the operator API in-process: /v1/audit, /v1/queries, cancel', () => {
  let sessionId: string;
  beforeAll(async () => {
    expect((await call('POST', '/v1/connections', { name: 'mem', url: 'sqlite::memory:' })).status).toBe(201);
    const opened = await call('POST', '/v1/sessions', { client: { name: 'vscode', version: '1.99' }, project: '/repo' });
    sessionId = SessionInfoSchema.parse(opened.json).id;
  });
  afterAll(async () => {
    audit.close();
    await pools.closeAll();
    registry.close();
    tmp.dispose();
  });

  it('records ok, failed and refused calls with the session’s client and project', async () => {
    await call('POST', '/v1/query', {
      session: sessionId,
      connection: 'mem',
      sql: 'SELECT ? AS a',
      params: ['p-value'],
      tool: 'run_query',
    });
    await call('POST', '/v1/query', { session: sessionId, connection: 'mem', sql: 'SELECT * FROM missing', tool: 'run_query' });
    const refused = await call('POST', '/v1/query', { session: sessionId, connection: 'mem', sql: 'DROP TABLE x', tool: 'run_query' });
    expect(refused.status).toBe(403);
    await call('POST', '/v1/query', { connection: 'ghost', sql: 'SELECT 1' });
    const { records } = AuditListSchema.parse((await call('GET', '/v1/audit')).json);
    expect(records.map((r) => [r.outcome, r.errorCode, r.rule !== null, r.tool, r.connection])).toEqual([
      ['ok', null, false, 'run_query', 'mem'],
      ['error', 'QUERY_FAILED', false, 'run_query', 'mem'],
      ['refused', 'STATEMENT_REFUSED', true, 'run_query', 'mem'],
      ['error', 'CONNECTION_NOT_FOUND', false, null, 'ghost'],
    ]);
    expect(records[0]).toMatchObject({
      session: sessionId,
      client: 'vscode',
      clientVersion: '1.99',
      project: '/repo',
      paramCount: 1,
      rows: 1,
      truncated: false,
    });
    expect(JSON.stringify(records)).not.toContain('p-value');
  });

  it('filters by session, connection, since, after and limit', async () => {
    const bySession = AuditListSchema.parse((await call('GET', `/v1/audit?session=${sessionId}`)).json).records;
    expect(bySession).toHaveLength(3);
    expect(AuditListSchema.parse((await call('GET', '/v1/audit?connection=ghost')).json).records).toHaveLength(1);
    expect(AuditListSchema.parse((await call('GET', '/v1/audit?since=1h&limit=2')).json).records).toHaveLength(2);
    expect(AuditListSchema.parse((await call('GET', '/v1/audit?since=2999-01-01')).json).records).toHaveLength(0);
    const first = bySession[0]?.id ?? 0;
    expect(AuditListSchema.parse((await call('GET', `/v1/audit?after=${first}`)).json).records.map((r) => r.id)).toEqual([
      first + 1,
      first + 2,
      first + 3,
    ]);
  });

  it.each([
    ['an unknown filter', '/v1/audit?user=x', /user/],
    ['a bad limit', '/v1/audit?limit=0', /limit/],
    ['a bad since', '/v1/audit?since=yesterday', /30m, 1h or 2d/],
  ])('answers 400 for %s', async (_what, path, message) => {
    const res = await call('GET', path);
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.json)).toMatch(message);
  });

  it('lists nothing running when idle; cancelling an unknown id is 404', async () => {
    expect(RunningQueryListSchema.parse((await call('GET', '/v1/queries')).json)).toEqual({ queries: [] });
    const res = await call('POST', '/v1/queries/deadbeef/cancel', {});
    expect(res.status).toBe(404);
    expect(res.json).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
