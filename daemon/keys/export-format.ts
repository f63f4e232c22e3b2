import { createCipheriv, createDecipheriv, createHash, randomBytes, scrypt } from 'node:crypto';
import { cliCommand } from '../../shared/cli-command.js';
import { HanactlError } from '../../shared/errors.js';
import { type ExportDocument, ExportDocumentSchema } from '../../shared/key-schemas.js';
import { KEY_BYTES } from './key-store.js';

/** scrypt cost for new exports: N=2^17, r=8, p=1 (about 128 MiB and a few hundred ms). */
export const EXPORT_KDF = { N: 2 ** 17, r: 8, p: 1 } as const;

/** The most an import will spend on a file's KDF parameters, so a crafted file cannot exhaust memory. */
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;

function deriveKey(passphrase: string, salt: Buffer, params: { N: number; r: number; p: number }): Promise<Buffer> {
  const { N, r, p } = params;
  if (N < 2 ** 14 || N > MAX_N || (N & (N - 1)) !== 0 || r < 1 || r > MAX_R || p < 1 || p > MAX_P) {
    throw new HanactlError('INVALID_REQUEST', `The export's scrypt parameters (N=${N}, r=${r}, p=${p}) are outside what hanactl accepts; the file was not made by hanactl.`);
  }
  return new Promise((resolve, reject) =>
    scrypt(passphrase.normalize('NFC'), salt, KEY_BYTES, { N, r, p, maxmem: 256 * N * r + 1024 * 1024 }, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/** The additional data the wrapped key is bound to: format, version and the registry's digest. */
function boundData(sha256: string): Buffer {
  return Buffer.from(`hanactl-registry-export/1/${sha256}`, 'utf8');
}

export interface SealInput {
  readonly registryKey: Buffer;
  readonly registryBytes: Buffer;
  readonly passphrase: string;
  readonly hanactlVersion: string;
  readonly now?: Date;
}

/** Builds an export document: the registry key wrapped by the passphrase, and the registry's bytes. */
export async function sealExport(input: SealInput): Promise<ExportDocument> {
  const salt = randomBytes(16);
  const iv = randomBytes(12);
  const sha256 = createHash('sha256').update(input.registryBytes).digest('hex');
  const wrapping = await deriveKey(input.passphrase, salt, EXPORT_KDF);
  try {
    const cipher = createCipheriv('aes-256-gcm', wrapping, iv);
    cipher.setAAD(boundData(sha256));
    const wrapped = Buffer.concat([cipher.update(input.registryKey), cipher.final()]);
    return {
      format: 'hanactl-registry-export',
      version: 1,
      note: `A hanactl registry and its key. The key is encrypted with a passphrase (scrypt, AES-256-GCM); the registry is encrypted with the key. Import it with: ${cliCommand()} key import --in <this file>`,
      createdAt: (input.now ?? new Date()).toISOString(),
      hanactlVersion: input.hanactlVersion,
      kdf: { name: 'scrypt', salt: salt.toString('base64'), ...EXPORT_KDF },
      cipher: { name: 'aes-256-gcm', iv: iv.toString('base64'), tag: cipher.getAuthTag().toString('base64') },
      wrappedKey: wrapped.toString('base64'),
      registry: { sha256, bytes: input.registryBytes.toString('base64') },
    };
  } finally {
    wrapping.fill(0);
  }
}

/** Parses an export file's text; a sentence naming the file when it is not one. */
export function parseExport(text: string, file: string): ExportDocument {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new HanactlError('INVALID_REQUEST', `${file} is not a hanactl export (it is not JSON). Make one with \`${cliCommand()} key export --out FILE\`.`);
  }
  const result = ExportDocumentSchema.safeParse(json);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new HanactlError('INVALID_REQUEST', `${file} is not a hanactl export this version reads (${issue?.path.join('.') || 'body'}: ${issue?.message}).`);
  }
  return result.data;
}

/**
 * Unwraps an export: the registry key and the registry's bytes. A wrong passphrase and a
 * changed file fail the same way (AES-GCM cannot tell them apart), with nothing written.
 */
export async function openExport(doc: ExportDocument, passphrase: string): Promise<{ registryKey: Buffer; registryBytes: Buffer }> {
  const registryBytes = Buffer.from(doc.registry.bytes, 'base64');
  if (createHash('sha256').update(registryBytes).digest('hex') !== doc.registry.sha256) {
    throw new HanactlError('INVALID_REQUEST', 'The export is damaged: the registry inside does not match its checksum. Nothing was written.');
  }
  const wrapping = await deriveKey(passphrase, Buffer.from(doc.kdf.salt, 'base64'), doc.kdf);
  try {
    const decipher = createDecipheriv('aes-256-gcm', wrapping, Buffer.from(doc.cipher.iv, 'base64'));
    decipher.setAAD(boundData(doc.registry.sha256));
    let registryKey: Buffer;
    try {
      decipher.setAuthTag(Buffer.from(doc.cipher.tag, 'base64'));
      registryKey = Buffer.concat([decipher.update(Buffer.from(doc.wrappedKey, 'base64')), decipher.final()]);
    } catch {
      throw new HanactlError('INVALID_REQUEST', 'Wrong passphrase (or the export file was changed); nothing was written.');
    }
    if (registryKey.length !== KEY_BYTES) throw new HanactlError('INVALID_REQUEST', 'The export holds a key of the wrong length; nothing was written.');
    return { registryKey, registryBytes };
  } finally {
    wrapping.fill(0);
  }
}
