import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;
/** The process that filled the pool: a process started from a startup snapshot must never replay its builder's bytes. */
let filledBy = -1;

/**
 * `bytes` random bytes from the system's CSPRNG, as hex. Drawn from a pooled buffer refilled
 * 4 KiB at a time, as `crypto.randomUUID` does: one CSPRNG call serves hundreds of ids, where
 * a `randomBytes` per id costs a call into OpenSSL on every tool call. Each byte is used once.
 */
export function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes)).toString('hex');
  if (offset + bytes > POOL_BYTES || filledBy !== process.pid) {
    randomFillSync(pool);
    offset = 0;
    filledBy = process.pid;
  }
  const hex = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return hex;
}
