import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../../../daemon/audit/audit-store.js';
import { CallTracker, SQL_PREVIEW_CHARS } from '../../../../daemon/queries/call-tracker.js';
import { queryCallInfo, summarizeRows } from '../../../../daemon/queries/query-call.js';
import { HanactlError } from '../../../../shared/errors.js';
import { RunningQueryListSchema } from '../../../../shared/schemas.js';

const session = { id: 'sess-1', client: { name: 'claude-code', version: '2.0' } };

function tracker(cancelWaitMillis = 2000) {
  const records: AuditEntry[] = [];
  return { calls: new CallTracker({ audit: { record: (e) => records.push(e) }, cancelWaitMillis }), records };
}

/** A call that runs until its signal aborts, then fails the way the drivers do. */
function untilAborted(signal: AbortSignal): Promise<{ rowCount: number; truncated: boolean }> {
  return new Promise((_, reject) => {
    signal.addEventListener(
      'abort',
      () => setTimeout(() => reject(new HanactlError('QUERY_CANCELLED', 'The statement was cancelled on the server.')), 20),
      {
        once: true,
      },
    );
  });
}

describe('CallTracker', () => {
  it('audits a finished call with who, what and how many rows, never parameter or context values', async () => {
    const { calls, records } = tracker();
    const body = {
      connection: 'pg',
      sql: 'SELECT * FROM t WHERE a = $1 AND b = $2',
      params: ['secret-value', 7],
      context: { TENANT: 'ctx-value' },
      tool: 'run_query',
    };
    await calls.track(
      queryCallInfo(body, { ...session, project: '/p', connection: 'pg', calls: 1, startedAt: '', lastSeenAt: '' }),
      undefined,
      async () => ({ rowCount: 3, truncated: true }),
      summarizeRows,
    );
    expect(records).toEqual([
      expect.objectContaining({
        session: 'sess-1',
        client: 'claude-code',
        clientVersion: '2.0',
        project: '/p',
        connection: 'pg',
        tool: 'run_query',
        statement: body.sql,
        paramCount: 2,
        rows: 3,
        truncated: true,
        outcome: 'ok',
        errorCode: null,
        rule: null,
      }),
    ]);
    expect(JSON.stringify(records)).not.toMatch(/secret-value|ctx-value/);
    expect(records[0]?.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('audits a refused statement with its rule, and a failure with its code', async () => {
    const { calls, records } = tracker();
    const info = { connection: 'pg', statement: 'DELETE FROM t', paramCount: 0 };
    const refusal = new HanactlError('STATEMENT_REFUSED', 'Refused.', { rule: 'write-statement' });
    await expect(calls.track(info, undefined, () => Promise.reject(refusal), summarizeRows)).rejects.toBe(refusal);
    await expect(
      calls.track(info, undefined, () => Promise.reject(new HanactlError('QUERY_FAILED', 'x')), summarizeRows),
    ).rejects.toThrow();
    await expect(calls.track(info, undefined, () => Promise.reject(new Error('boom')), summarizeRows)).rejects.toThrow('boom');
    expect(records.map((r) => [r.outcome, r.errorCode, r.rule, r.session, r.tool])).toEqual([
      ['refused', 'STATEMENT_REFUSED', 'write-statement', null, null],
      ['error', 'QUERY_FAILED', null, null, null],
      ['error', 'INTERNAL', null, null, null],
    ]);
  });

  it('lists a running call with the first 200 characters of its SQL, and forgets it when it ends', async () => {
    const { calls } = tracker();
    let release!: () => void;
    const sql = `SELECT '${'x'.repeat(500)}'`;
    const running = calls.track(
      { connection: 'pg', statement: sql, paramCount: 0, session },
      undefined,
      () => new Promise<{ rowCount: number; truncated: boolean }>((r) => (release = () => r({ rowCount: 1, truncated: false }))),
      summarizeRows,
    );
    const { queries } = RunningQueryListSchema.parse({ queries: calls.list() });
    expect(queries).toEqual([expect.objectContaining({ session: 'sess-1', client: 'claude-code', connection: 'pg', cancelling: false })]);
    expect(queries[0]?.sql).toBe(sql.slice(0, SQL_PREVIEW_CHARS));
    expect(queries[0]?.id).toMatch(/^[0-9a-f]{8}$/);
    release();
    await running;
    expect(calls.list()).toEqual([]);
  });

  it('cancels by id: aborts the call’s signal, waits for it to stop, and tells the agent a person did it', async () => {
    const { calls, records } = tracker();
    const running = calls.track({ connection: 'pg', statement: 'SELECT slow()', paramCount: 0 }, undefined, untilAborted, summarizeRows);
    const [listed] = calls.list();
    const result = await calls.cancel(listed?.id ?? '');
    expect(result).toEqual({ id: listed?.id, cancelled: true, stopped: true });
    await expect(running).rejects.toMatchObject({ code: 'QUERY_CANCELLED', message: expect.stringMatching(/hanactl(?:\.js)? cancel/) });
    expect(records[0]).toMatchObject({ outcome: 'error', errorCode: 'QUERY_CANCELLED' });
  });

  it('answers stopped: false when the statement outlives the wait', async () => {
    const { calls } = tracker(50);
    let release!: () => void;
    const running = calls.track(
      { connection: 'pg', statement: 'SELECT 1', paramCount: 0 },
      undefined,
      () => new Promise<{ rowCount: number; truncated: boolean }>((r) => (release = () => r({ rowCount: 1, truncated: false }))),
      summarizeRows,
    );
    const id = calls.list()[0]?.id ?? '';
    expect(await calls.cancel(id)).toEqual({ id, cancelled: true, stopped: false });
    expect(calls.list()[0]?.cancelling).toBe(true);
    release();
    await running;
  });

  it('refuses an unknown id with NOT_FOUND', async () => {
    await expect(tracker().calls.cancel('nope')).rejects.toMatchObject({
      code: 'NOT_FOUND',
      message: expect.stringMatching(/hanactl(?:\.js)? queries/),
    });
  });

  it('passes the caller’s abort (the client went away) to the call', async () => {
    const { calls, records } = tracker();
    const caller = new AbortController();
    const running = calls.track({ connection: 'pg', statement: 'SELECT 1', paramCount: 0 }, caller.signal, untilAborted, summarizeRows);
    caller.abort();
    await expect(running).rejects.toMatchObject({ code: 'QUERY_CANCELLED', message: 'The statement was cancelled on the server.' });
    expect(records[0]).toMatchObject({ errorCode: 'QUERY_CANCELLED' });
  });

  it('starts a call already aborted when the caller’s signal is', async () => {
    const { calls } = tracker();
    const seen: boolean[] = [];
    await calls.track(
      { connection: 'pg', statement: 'SELECT 1', paramCount: 0 },
      AbortSignal.abort(),
      async (s) => {
        seen.push(s.aborted);
        return { rowCount: 0, truncated: false };
      },
      summarizeRows,
    );
    expect(seen).toEqual([true]);
  });
});

describe('queryCallInfo', () => {
  const info = { id: 's', client: { name: 'c' }, project: '/session/project', connection: null, calls: 0, startedAt: '', lastSeenAt: '' };
  it('takes the call’s own project folder over the session’s', () => {
    expect(queryCallInfo({ connection: 'project:db', sql: 'SELECT 1', project: '/call/project' }, info).project).toBe('/call/project');
    expect(queryCallInfo({ connection: 'db', sql: 'SELECT 1' }, info).project).toBe('/session/project');
    expect(queryCallInfo({ connection: 'db', sql: 'SELECT 1' }, undefined)).toEqual({
      connection: 'db',
      statement: 'SELECT 1',
      paramCount: 0,
    });
  });
});
