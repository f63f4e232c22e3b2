import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { StatementWatch, type StatementWatchOptions } from '../../../../daemon/engines/statement-watch.js';

/** A cancel that records each call and stays in flight until released. */
function pendingCancel(): { cancel: () => Promise<void>; calls: () => number; release: () => void } {
  let calls = 0;
  const waiting: (() => void)[] = [];
  return {
    cancel: () => {
      calls++;
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    calls: () => calls,
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

function watch(options: Partial<StatementWatchOptions> = {}): StatementWatch {
  return new StatementWatch({ timeoutMs: 1000, ...options });
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('the statement watch', () => {
  it('cancels at the deadline plus its margin, with the timeout as reason and error', async () => {
    const cancel = vi.fn();
    const w = watch({ timeoutMs: 1000, marginMs: 500, cancel });
    vi.advanceTimersByTime(1499);
    expect(cancel).not.toHaveBeenCalled();
    expect(w.reason).toBeUndefined();
    vi.advanceTimersByTime(1);
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(w.reason).toBe('timeout');
    expect(w.error()).toMatchObject({
      code: 'QUERY_TIMEOUT',
      message:
        'The statement ran past its time limit of 1000 ms and was stopped. Narrow it (WHERE, LIMIT) or ask for a longer timeout (timeoutMs).',
    });
    await w.stop();
  });

  it('cancels when the signal aborts, and at once when it had already aborted', async () => {
    const controller = new AbortController();
    const cancel = vi.fn();
    const w = watch({ signal: controller.signal, cancel });
    expect(cancel).not.toHaveBeenCalled();
    controller.abort();
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(w.reason).toBe('cancelled');
    expect(w.error()).toMatchObject({ code: 'QUERY_CANCELLED', message: expect.stringContaining('cancelled before it finished') });
    await w.stop();

    const early = vi.fn();
    const w2 = watch({ signal: AbortSignal.abort(), cancel: early });
    expect(early).toHaveBeenCalledTimes(1);
    expect(w2.reason).toBe('cancelled');
    await w2.stop();
  });

  it('cancels once by default: the first reason wins and later ones are ignored', async () => {
    const controller = new AbortController();
    const cancel = vi.fn();
    const w = watch({ timeoutMs: 100, signal: controller.signal, cancel });
    controller.abort();
    vi.advanceTimersByTime(10_000);
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(w.reason).toBe('cancelled');
    await w.stop();
  });

  it('repeats the cancel every repeatMs until stopped, never two at a time', async () => {
    const p = pendingCancel();
    const w = watch({ timeoutMs: 100, cancel: p.cancel, repeatMs: 150 });
    vi.advanceTimersByTime(100);
    expect(p.calls()).toBe(1);
    vi.advanceTimersByTime(300); // the first is still on its way: no second one beside it
    expect(p.calls()).toBe(1);
    p.release();
    await vi.advanceTimersByTimeAsync(150);
    expect(p.calls()).toBe(2);
    p.release();
    await vi.advanceTimersByTimeAsync(150);
    expect(p.calls()).toBe(3);
    p.release();
    await w.stop();
    await vi.advanceTimersByTimeAsync(1000);
    expect(p.calls()).toBe(3);
  });

  it('abandons after the grace when the statement has not ended, and race rejects with the stop error', async () => {
    const abandon = vi.fn();
    const w = watch({ timeoutMs: 100, cancel: () => {}, graceMs: 200, abandon });
    const work = new Promise<string>(() => {}); // a statement that never ends
    const raced = w.race(work);
    raced.catch(() => {});
    vi.advanceTimersByTime(299);
    expect(abandon).not.toHaveBeenCalled();
    expect(w.abandoned).toBe(false);
    vi.advanceTimersByTime(1);
    expect(abandon).toHaveBeenCalledTimes(1);
    expect(w.abandoned).toBe(true);
    await expect(raced).rejects.toMatchObject({ code: 'QUERY_TIMEOUT' });
    await w.stop();
  });

  it('abandons at once with a grace of 0, and not at all once stopped in time', async () => {
    const now = vi.fn();
    const w = watch({ timeoutMs: 100, graceMs: 0, abandon: now });
    vi.advanceTimersByTime(100);
    expect(now).toHaveBeenCalledTimes(1);
    await w.stop();

    const never = vi.fn();
    const w2 = watch({ timeoutMs: 100, cancel: () => {}, graceMs: 200, abandon: never });
    vi.advanceTimersByTime(150);
    await w2.stop();
    vi.advanceTimersByTime(10_000);
    expect(never).not.toHaveBeenCalled();
    expect(w2.reason).toBe('timeout');
  });

  it('stop resolves only once the cancel on its way has settled', async () => {
    const p = pendingCancel();
    const w = watch({ timeoutMs: 100, cancel: p.cancel });
    vi.advanceTimersByTime(100);
    let stopped = false;
    const stopping = w.stop().then(() => {
      stopped = true;
    });
    await vi.advanceTimersByTimeAsync(5000);
    expect(stopped).toBe(false);
    p.release();
    await stopping;
    expect(stopped).toBe(true);
  });

  it('does nothing once stopped: no deadline, no signal, no cancel', async () => {
    const controller = new AbortController();
    const cancel = vi.fn();
    const w = watch({ timeoutMs: 100, signal: controller.signal, cancel });
    await w.stop();
    controller.abort();
    vi.advanceTimersByTime(10_000);
    expect(cancel).not.toHaveBeenCalled();
    expect(w.reason).toBeUndefined();
  });

  it('interrupt without a reason cancels but gives no stop reason (the row cap)', async () => {
    const cancel = vi.fn();
    const w = watch({ timeoutMs: 100, cancel });
    w.interrupt();
    vi.advanceTimersByTime(1000);
    expect(cancel).toHaveBeenCalledTimes(1);
    expect(w.interrupted).toBe(true);
    expect(w.reason).toBeUndefined();
    await w.stop();
  });

  it('a cancel that fails is ignored; the grace still bounds the wait', async () => {
    const abandon = vi.fn();
    const w = watch({ timeoutMs: 100, cancel: () => Promise.reject(new Error('no route')), graceMs: 50, abandon });
    await vi.advanceTimersByTimeAsync(150);
    expect(abandon).toHaveBeenCalledTimes(1);
    await expect(w.stop()).resolves.toBeUndefined();
  });
});
