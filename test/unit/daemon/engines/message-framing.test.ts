import { describe, expect, it } from 'vitest';
import { MysqlPacketFraming } from '../../../../daemon/engines/mysql/mysql-packet-bound.js';
import { PgMessageFraming } from '../../../../daemon/engines/postgres/postgres-message-bound.js';

/** A PostgreSQL message: type byte, length (counting itself), body. */
const pgMessage = (type: string, bodyBytes: number, declared = bodyBytes + 4): Buffer => {
  const b = Buffer.alloc(5 + bodyBytes, 0x61);
  b.write(type, 0);
  b.writeUInt32BE(declared, 1);
  return b;
};

/** A MySQL packet header: 3-byte length, sequence number. */
const myHeader = (length: number, seq: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUIntLE(length, 0, 3);
  b[3] = seq;
  return b;
};

/**
 * Feeds `bytes` in chunks of `size`; the first report, with its offset in the whole stream. A
 * header split over chunks is reported in the chunk that completes it, at that chunk's start.
 */
function feed(framing: { scan(c: Uint8Array): { at: number; bytes: number } | undefined }, bytes: Buffer, size: number) {
  for (let i = 0; i < bytes.length; i += size) {
    const over = framing.scan(bytes.subarray(i, i + size));
    if (over) return { at: i + over.at, bytes: over.bytes };
  }
  return undefined;
}

describe('PostgreSQL message framing', () => {
  const stream = Buffer.concat([pgMessage('T', 30), pgMessage('D', 100), pgMessage('D', 0, 2000), pgMessage('C', 10)]);

  for (const size of [1, 3, 7, 64, stream.length])
    it(`finds the first message over the limit at its header, in chunks of ${size} bytes`, () => {
      const over = feed(new PgMessageFraming(1000), stream, size);
      expect(over?.bytes).toBe(2001);
      // Nothing of the message is handed on past its header's first bytes (those of earlier chunks).
      expect(over?.at).toBeGreaterThanOrEqual(35 + 105);
      expect(over?.at).toBeLessThan(35 + 105 + 5);
      expect(feed(new PgMessageFraming(5000), stream, size)).toBeUndefined();
    });
});

describe('MySQL packet framing', () => {
  it('adds up the parts of a payload sent in several packets', () => {
    const framing = new MysqlPacketFraming(20_000_000);
    // A 16 MiB - 1 part (continued), then a part of 5 MB: 21.8 MB in all.
    expect(framing.scan(myHeader(0xffffff, 1))).toBeUndefined();
    expect(framing.scan(Buffer.alloc(0xffffff))).toBeUndefined();
    expect(framing.scan(myHeader(5_000_000, 2))).toEqual({ at: 0, bytes: 0xffffff + 5_000_000 });
  });

  it('counts each payload on its own once its last part ends', () => {
    const framing = new MysqlPacketFraming(100);
    const packets = Buffer.concat([myHeader(90, 1), Buffer.alloc(90), myHeader(90, 2), Buffer.alloc(90), myHeader(101, 3)]);
    expect(feed(framing, packets, 5)).toEqual({ at: 190, bytes: 101 });
  });
});
