import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { AuditLog } from '../../../../daemon/audit/audit-log.js';
import { AuditStore } from '../../../../daemon/audit/audit-store.js';
import { entry, tempDir } from './fixtures.js';

const tmp = tempDir();
afterAll(() => tmp.dispose());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function open(name: string) {
  const store = AuditStore.open(join(tmp.dir, name));
  const insert = vi.spyOn(store, 'insert');
  return { store, insert };
}

describe('AuditLog batches writes off the hot path', () => {
  it('only queues on record; writes the queue in one transaction after the interval', async () => {
    const { store, insert } = open('interval.db');
    const log = new AuditLog(store, { flushIntervalMillis: 100 });
    for (let i = 0; i < 5; i++) log.record(entry({ statement: `SELECT ${i}` }));
    expect(insert).not.toHaveBeenCalled();
    expect(log.pending).toBe(5);
    await sleep(160);
    expect(insert).toHaveBeenCalledTimes(1);
    expect(insert.mock.calls[0]?.[0]).toHaveLength(5);
    expect(log.pending).toBe(0);
    log.close();
  });

  it('writes a full batch on the next turn of the event loop, without waiting for the interval', async () => {
    const { store, insert } = open('batch.db');
    const log = new AuditLog(store, { flushIntervalMillis: 60_000, batchSize: 100 });
    for (let i = 0; i < 100; i++) log.record(entry());
    expect(insert).not.toHaveBeenCalled();
    await new Promise((r) => setImmediate(r));
    expect(insert).toHaveBeenCalledTimes(1);
    expect(insert.mock.calls[0]?.[0]).toHaveLength(100);
    log.close();
  });

  it('flushes before a read, so a reader sees every finished call', () => {
    const { store } = open('read.db');
    const log = new AuditLog(store, { flushIntervalMillis: 60_000 });
    log.record(entry({ statement: 'SELECT 42' }));
    expect(log.list({ limit: 10 }).map((r) => r.statement)).toEqual(['SELECT 42']);
    log.close();
  });

  it('writes what is queued on close and ignores records after it', () => {
    const path = join(tmp.dir, 'close.db');
    const log = new AuditLog(AuditStore.open(path), { flushIntervalMillis: 60_000 });
    log.record(entry());
    log.record(entry());
    log.close();
    log.record(entry());
    const reopened = AuditStore.open(path);
    expect(reopened.list({ limit: 10 })).toHaveLength(2);
    reopened.close();
  });

  it('drops a batch that cannot be written, reports it, and keeps accepting records', async () => {
    const { store, insert } = open('fail.db');
    const errors: [unknown, number][] = [];
    const log = new AuditLog(store, { flushIntervalMillis: 20, onError: (err, n) => errors.push([err, n]) });
    insert.mockImplementationOnce(() => {
      throw new Error('disk full');
    });
    log.record(entry());
    await sleep(60);
    expect(errors).toHaveLength(1);
    expect(errors[0]?.[1]).toBe(1);
    expect(log.dropped).toBe(1);
    log.record(entry({ statement: 'SELECT after' }));
    expect(log.list({ limit: 10 }).map((r) => r.statement)).toEqual(['SELECT after']);
    log.close();
  });

  it('bounds the queue, dropping the oldest', () => {
    const { store } = open('bound.db');
    const log = new AuditLog(store, { flushIntervalMillis: 60_000, batchSize: 1000, maxQueued: 3 });
    for (let i = 0; i < 5; i++) log.record(entry({ statement: `SELECT ${i}` }));
    expect(log.dropped).toBe(2);
    expect(log.list({ limit: 10 }).map((r) => r.statement)).toEqual(['SELECT 2', 'SELECT 3', 'SELECT 4']);
    log.close();
  });

  it('does not hold the process open: its timers are unref’d', () => {
    const { store } = open('unref.db');
    const log = new AuditLog(store, { flushIntervalMillis: 60_000 });
    const spy = vi.spyOn(globalThis, 'setTimeout');
    log.record(entry());
    const timer = spy.mock.results[0]?.value as NodeJS.Timeout;
    expect(timer.hasRef()).toBe(false);
    spy.mockRestore();
    log.close();
  });
});
