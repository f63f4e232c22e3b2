import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AuditListSchema, RunningQueryListSchema, SessionInfoSchema } from '../../../../shared/schemas.js';
import { inProcessDaemon, requestJson } from '../../../helpers/in-process-daemon.js';
import { tempDir } from './fixtures.js';

const tmp = tempDir();
const daemon = await inProcessDaemon(tmp.dir, { connectTimeoutMs: 2000, maxPools: 4 });
const app = daemon.app;

const call = (method: string, path: string, body?: unknown) => requestJson(app, method, path, body);

describe('the operator API in-process: /v1/audit, /v1/queries, cancel', () => {
  let sessionId: string;
  beforeAll(async () => {
    expect((await call('POST', '/v1/connections', { name: 'mem', url: 'sqlite::memory:' })).status).toBe(201);
    const opened = await call('POST', '/v1/sessions', { client: { name: 'vscode', version: '1.99' }, project: '/repo' });
    sessionId = SessionInfoSchema.parse(opened.body).id;
  });
  afterAll(async () => {
    await daemon.close();
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
    const { records } = AuditListSchema.parse((await call('GET', '/v1/audit')).body);
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
    const bySession = AuditListSchema.parse((await call('GET', `/v1/audit?session=${sessionId}`)).body).records;
    expect(bySession).toHaveLength(3);
    expect(AuditListSchema.parse((await call('GET', '/v1/audit?connection=ghost')).body).records).toHaveLength(1);
    expect(AuditListSchema.parse((await call('GET', '/v1/audit?since=1h&limit=2')).body).records).toHaveLength(2);
    expect(AuditListSchema.parse((await call('GET', '/v1/audit?since=2999-01-01')).body).records).toHaveLength(0);
    const first = bySession[0]?.id ?? 0;
    expect(AuditListSchema.parse((await call('GET', `/v1/audit?after=${first}`)).body).records.map((r) => r.id)).toEqual([
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
    expect(JSON.stringify(res.body)).toMatch(message);
  });

  it('lists nothing running when idle; cancelling an unknown id is 404', async () => {
    expect(RunningQueryListSchema.parse((await call('GET', '/v1/queries')).body)).toEqual({ queries: [] });
    const res = await call('POST', '/v1/queries/deadbeef/cancel', {});
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ error: { code: 'NOT_FOUND' } });
  });
});
