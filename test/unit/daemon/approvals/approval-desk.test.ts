import { describe, expect, it } from 'vitest';
import { ApprovalDesk } from '../../../../daemon/approvals/approval-desk.js';
import type { PendingWrite, PersonAnswer } from '../../../../shared/approval.js';
import type { ApprovalDecision } from '../../../../shared/schemas.js';

const write = (queryId: string, timeoutSeconds = 300) => ({ queryId, connection: 'shop', sql: 'DELETE FROM orders', timeoutSeconds });

/** A desk whose listener records what it heard, and a way to wait until a write is waiting. */
function desk() {
  const heard: string[] = [];
  const decisions = new Map<string, ApprovalDecision>();
  const waiters = new Map<string, () => void>();
  const listening = new ApprovalDesk(
    {
      waiting: (id) => {
        heard.push(`waiting ${id}`);
        waiters.get(id)?.();
      },
      decided: (id, d) => {
        heard.push(`${d.decision} ${id}`);
        decisions.set(id, d);
      },
    },
    'hanactl',
  );
  const waitingFor = (id: string) => new Promise<void>((r) => waiters.set(id, r));
  return { desk: listening, heard, decisions, waitingFor };
}

describe('ApprovalDesk', () => {
  it('lets an approved write go on, with who approved it, and lists it while it waits', async () => {
    const { desk: d, heard } = desk();
    const waiting = d.wait(write('a1'), undefined);
    expect(d.list().map((p) => [p.queryId, p.approveCommand, p.denyCommand])).toEqual([['a1', 'hanactl approve a1', 'hanactl deny a1']]);
    const { decision } = d.decide('a1', { approve: true, by: 'cli', who: 'alice' });
    await expect(waiting).resolves.toMatchObject({ decision: 'approved', by: 'cli', who: 'alice' });
    expect(decision.decision).toBe('approved');
    expect(d.list()).toEqual([]);
    expect(heard).toEqual(['waiting a1', 'approved a1']);
  });

  it('throws for a denied write, with the reason, and a second decision finds nothing waiting', async () => {
    const { desk: d } = desk();
    const waiting = d.wait(write('d1'), undefined);
    d.decide('d1', { approve: false, by: 'cli', who: 'alice', reason: 'not today' });
    await expect(waiting).rejects.toMatchObject({ code: 'WRITE_DENIED', message: expect.stringContaining('Reason: not today') });
    expect(() => d.decide('d1', { approve: true, by: 'cli', who: 'bob' })).toThrow(/No write with id "d1" is waiting/);
  });

  it('expires a write no one decides on, naming the command that would have approved it', async () => {
    const { desk: d, decisions } = desk();
    await expect(d.wait(write('e1', 0.05), undefined)).rejects.toMatchObject({
      code: 'APPROVAL_EXPIRED',
      message: expect.stringContaining('`hanactl approve e1`'),
    });
    expect(decisions.get('e1')).toMatchObject({ decision: 'expired', by: null });
  });

  it('takes the first of two answers: the editor’s question hears it is moot', async () => {
    const { desk: d } = desk();
    let editorAnswer!: (a: PersonAnswer) => void;
    let moot!: AbortSignal;
    let pending!: PendingWrite;
    const waiting = d.wait(write('r1'), undefined, {
      onWaiting: (p, answer, decided) => {
        pending = p;
        editorAnswer = answer;
        moot = decided;
      },
    });
    expect(pending.sql).toBe('DELETE FROM orders');
    expect(moot.aborted).toBe(false);
    d.decide('r1', { approve: false, by: 'cli', who: 'alice' });
    expect(moot.aborted).toBe(true);
    editorAnswer({ approve: true, by: 'elicitation', who: 'editor' });
    await expect(waiting).rejects.toMatchObject({ code: 'WRITE_DENIED' });
  });

  it('ends a write whose caller went away as cancelled', async () => {
    const { desk: d, decisions } = desk();
    const caller = new AbortController();
    const waiting = d.wait(write('c1'), caller.signal);
    caller.abort();
    await expect(waiting).rejects.toMatchObject({ code: 'QUERY_CANCELLED', message: expect.stringContaining('did not run') });
    expect(decisions.get('c1')?.decision).toBe('cancelled');
  });

  it('ends every waiting write when the daemon stops, and refuses new ones', async () => {
    const { desk: d, waitingFor } = desk();
    const seen = waitingFor('s2');
    const first = d.wait(write('s1'), undefined);
    const second = d.wait(write('s2'), undefined);
    await seen;
    d.stopAll();
    await expect(first).rejects.toMatchObject({ code: 'SHUTTING_DOWN', message: expect.stringContaining('did not run') });
    await expect(second).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
    await expect(d.wait(write('s3'), undefined)).rejects.toMatchObject({ code: 'SHUTTING_DOWN' });
  });
});
