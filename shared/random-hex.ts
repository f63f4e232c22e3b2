import { randomFillSync } from 'node:crypto';

const POOL_BYTES = 4096;
const pool = Buffer.alloc(POOL_BYTES);
let offset = POOL_BYTES;
/** The process that filled the pool: a process started from a startup snapshot must never replay its builder's bytes. */
let filledBy = -1;

/**
 * Where `bytes` unused random bytes start in the pool (at most POOL_BYTES), refilling it from the
 * system's CSPRNG when it runs short, as `crypto.randomUUID` does: one CSPRNG call serves hundreds
 * of draws, where a `randomBytes` per draw costs a call into OpenSSL on every tool call. Each byte
 * is used once.
 */
function take(bytes: number): number {
  if (offset + bytes > POOL_BYTES || filledBy !== process.pid) {
    randomFillSync(pool);
    offset = 0;
    filledBy = process.pid;
  }
  const at = offset;
  offset += bytes;
  return at;
}

/** `bytes` random bytes from the system's CSPRNG, as hex (pooled: see take). */
export function randomHex(bytes: number): string {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.alloc(bytes)).toString('hex');
  const at = take(bytes);
  return pool.toString('hex', at, at + bytes);
}

/** A number in [0, 1) from 48 bits of the system's CSPRNG (pooled: see take). */
export function randomFraction(): number {
  return pool.readUIntBE(take(6), 6) / 2 ** 48;
}
