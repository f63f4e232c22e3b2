import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { coalesceWrites } from '../../../../../daemon/engines/postgres/postgres-connection.js';

/** A stream that records each system-call-sized write it is handed: one entry per write or writev. */
function recorder(): { stream: Writable; batches: string[][] } {
  const batches: string[][] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      batches.push([chunk.toString()]);
      done();
    },
    writev(chunks, done) {
      batches.push(chunks.map((c) => (c.chunk as Buffer).toString()));
      done();
    },
  });
  return { stream, batches };
}

describe('coalescing the PostgreSQL protocol writes of one step', () => {
  it('sends what one tick writes as one batch, in order, by the next tick', async () => {
    const { stream, batches } = recorder();
    coalesceWrites(stream);
    for (const message of ['Parse', 'Bind', 'Describe', 'Flush']) stream.write(Buffer.from(message));
    expect(batches).toEqual([]);
    await new Promise((r) => process.nextTick(r));
    expect(batches).toEqual([['Parse', 'Bind', 'Describe', 'Flush']]);
  });

  it('starts a new batch in a later tick, and end() still sends what is pending', async () => {
    const { stream, batches } = recorder();
    coalesceWrites(stream);
    stream.write(Buffer.from('Execute'));
    stream.write(Buffer.from('Flush'));
    await new Promise((r) => setImmediate(r));
    stream.write(Buffer.from('Close'));
    stream.write(Buffer.from('Sync'));
    stream.end(Buffer.from('Terminate'));
    await new Promise((r) => stream.on('finish', r));
    expect(batches).toEqual([
      ['Execute', 'Flush'],
      ['Close', 'Sync', 'Terminate'],
    ]);
  });
});
