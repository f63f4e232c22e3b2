import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EXPORT_KDF, openExport, parseExport, sealExport } from '../../../../daemon/keys/export-format.js';
import { HanactlError } from '../../../../shared/errors.js';

const registryKey = randomBytes(32);
const registryBytes = randomBytes(4096);
const doc = await sealExport({ registryKey, registryBytes, passphrase: 'correct horse battery', hanactlVersion: '9.9.9' });

async function refused(fn: () => Promise<unknown>): Promise<string> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HanactlError);
    return (err as Error).message;
  }
  throw new Error('expected a refusal');
}

describe('the export format', () => {
  it('records scrypt and AES-256-GCM parameters, never the key in the clear', () => {
    expect(doc).toMatchObject({
      format: 'hanactl-registry-export',
      version: 1,
      hanactlVersion: '9.9.9',
      kdf: { name: 'scrypt', ...EXPORT_KDF },
      cipher: { name: 'aes-256-gcm' },
    });
    expect(Buffer.from(doc.kdf.salt, 'base64')).toHaveLength(16);
    expect(Buffer.from(doc.cipher.iv, 'base64')).toHaveLength(12);
    expect(JSON.stringify(doc)).not.toContain(registryKey.toString('base64'));
    expect(JSON.stringify(doc)).not.toContain(registryKey.toString('hex'));
  });

  it('round-trips through JSON with the right passphrase', async () => {
    const parsed = parseExport(JSON.stringify(doc), 'x.json');
    const opened = await openExport(parsed, 'correct horse battery');
    expect(opened.registryKey.equals(registryKey)).toBe(true);
    expect(opened.registryBytes.equals(registryBytes)).toBe(true);
  });

  it('refuses a wrong passphrase', async () => {
    expect(await refused(() => openExport(doc, 'correct horse batterY'))).toMatch(/Wrong passphrase/);
  });

  it('refuses a changed registry (checksum) and a changed checksum (bound to the key)', async () => {
    const bytes = Buffer.from(registryBytes);
    bytes[10] = (bytes[10] ?? 0) ^ 1;
    expect(
      await refused(() => openExport({ ...doc, registry: { ...doc.registry, bytes: bytes.toString('base64') } }, 'correct horse battery')),
    ).toMatch(/damaged/);
    const { createHash } = await import('node:crypto');
    const forged = { bytes: bytes.toString('base64'), sha256: createHash('sha256').update(bytes).digest('hex') };
    expect(await refused(() => openExport({ ...doc, registry: forged }, 'correct horse battery'))).toMatch(
      /Wrong passphrase \(or the export file was changed\)/,
    );
  });

  it('refuses KDF parameters hanactl would never write (a crafted file cannot exhaust memory)', async () => {
    expect(await refused(() => openExport({ ...doc, kdf: { ...doc.kdf, N: 2 ** 24 } }, 'x'))).toMatch(/scrypt parameters/);
    expect(await refused(() => openExport({ ...doc, kdf: { ...doc.kdf, N: 1000 } }, 'x'))).toMatch(/scrypt parameters/);
  });

  it.each([
    ['not JSON', 'hello', /not JSON/],
    ['another format', JSON.stringify({ format: 'something-else' }), /not a hanactl export this version reads \(format/],
    ['a newer version', JSON.stringify({ ...doc, version: 2 }), /version/],
  ])('refuses a file that is %s, naming it', (_what, text, message) => {
    expect(() => parseExport(text, '/tmp/reg.json')).toThrow(message);
    expect(() => parseExport(text, '/tmp/reg.json')).toThrow('/tmp/reg.json');
  });
});
