import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { AuditLog } from '../../../../daemon/audit/audit-log.js';
import { AuditStore } from '../../../../daemon/audit/audit-store.js';
import { DEFAULT_AUDIT_DAYS, startRetention } from '../../../../daemon/audit/retention.js';
import { entry, tempDir } from './fixtures.js';

const tmp = tempDir();
afterAll(() => tmp.dispose());
const DAY = 86_400_000;

describe('audit retention', () => {
  it('keeps 30 days unless told otherwise', () => {
    expect(DEFAULT_AUDIT_DAYS).toBe(30);
  });

  it('prunes at start, then on every interval, records older than the given days', async () => {
    const log = new AuditLog(AuditStore.open(join(tmp.dir, 'r.db')));
    let now = Date.parse('2024-06-30T00:00:00Z');
    for (const daysAgo of [40, 31, 29, 1]) log.record(entry({ at: new Date(now - daysAgo * DAY).toISOString(), statement: `${daysAgo}d` }));
    const pruned: number[] = [];
    const stop = startRetention(log, { days: 30, now: () => new Date(now), intervalMillis: 30, onPruned: (n) => pruned.push(n) });
    expect(pruned).toEqual([2]);
    expect(log.list({ limit: 10 }).map((r) => r.statement)).toEqual(['29d', '1d']);
    now += 2 * DAY;
    await new Promise((r) => setTimeout(r, 80));
    stop();
    expect(pruned.slice(0, 2)).toEqual([2, 1]);
    expect(log.list({ limit: 10 }).map((r) => r.statement)).toEqual(['1d']);
    log.close();
  });

  it('refuses a retention under one day', () => {
    const log = new AuditLog(AuditStore.open(join(tmp.dir, 'bad.db')));
    expect(() => startRetention(log, { days: 0 })).toThrow(/at least 1/);
    log.close();
  });

  it('reports a failed prune instead of throwing from the timer', () => {
    const errors: unknown[] = [];
    const stop = startRetention(
      {
        pruneBefore: () => {
          throw new Error('locked');
        },
      },
      { days: 1, onError: (e) => errors.push(e) },
    );
    stop();
    expect(errors).toHaveLength(1);
  });
});

describe('audit retention without listeners', () => {
  it('still prunes', () => {
    const log = new AuditLog(AuditStore.open(join(tmp.dir, 'quiet.db')));
    log.record(entry({ at: '2000-01-01T00:00:00.000Z' }));
    startRetention(log, { days: 1 })();
    expect(log.list({ limit: 10 })).toEqual([]);
    log.close();
  });
});
