import { describe, expect, it } from 'vitest';
import { withProgress } from '../../../../shim/progress.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('withProgress (the shim’s progress notifications)', () => {
  it('sends none when the client gave no progress token', async () => {
    const sent: unknown[] = [];
    const extra = { sendNotification: async (n: unknown) => void sent.push(n) };
    expect(
      await withProgress(
        extra,
        () => 'x',
        () => sleep(80).then(() => 'done'),
        20,
      ),
    ).toBe('done');
    expect(sent).toEqual([]);
  });

  it('sends increasing progress with the token (0 included) and a message, then stops', async () => {
    const sent: { method: string; params: { progressToken: unknown; progress: number; message?: string } }[] = [];
    const extra = { _meta: { progressToken: 0 }, sendNotification: async (n: (typeof sent)[number]) => void sent.push(n) };
    await withProgress(
      extra as never,
      (s) => `running ${s} s`,
      () => sleep(130),
      30,
    );
    const count = sent.length;
    expect(count).toBeGreaterThanOrEqual(2);
    expect(sent[0]).toMatchObject({
      method: 'notifications/progress',
      params: { progressToken: 0, message: expect.stringMatching(/^running \d+ s$/) },
    });
    for (let i = 1; i < sent.length; i++) expect(sent[i]?.params.progress).toBeGreaterThan(sent[i - 1]?.params.progress ?? Infinity);
    await sleep(80);
    expect(sent).toHaveLength(count);
  });

  it('keeps the call going when a notification cannot be sent, and passes its failure through', async () => {
    const extra = { _meta: { progressToken: 'tok' }, sendNotification: () => Promise.reject(new Error('closed')) };
    await expect(
      withProgress(
        extra as never,
        () => 'x',
        () => sleep(60).then(() => Promise.reject(new Error('query failed'))),
        20,
      ),
    ).rejects.toThrow('query failed');
  });
});
