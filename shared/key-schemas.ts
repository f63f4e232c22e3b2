import { z } from 'zod';
import { KeySourceSchema } from './schemas.js';

/**
 * The key API's bodies (`/v1/keys/*`) and the export file's format. Only the `hanactl`
 * command line may call these routes (its client header); the shim never does.
 */

/** `POST /v1/keys/rotate`. */
export const RotateKeyRequestSchema = z.strictObject({
  /** Required when the key comes from HANACTL_REGISTRY_KEY: the new key is returned once, to be stored by the person. */
  printNewKey: z.boolean().optional(),
});
export type RotateKeyRequest = z.infer<typeof RotateKeyRequestSchema>;

export const RotateKeyResultSchema = z.object({
  keySource: KeySourceSchema,
  rotatedAt: z.string(),
  /** Base64 of the new 32-byte key; only when asked for with `printNewKey`. */
  newKey: z.string().optional(),
});
export type RotateKeyResult = z.infer<typeof RotateKeyResultSchema>;

/** The shortest passphrase an export accepts: it alone protects every password in the file. */
export const MIN_PASSPHRASE_LENGTH = 8;

/** `POST /v1/keys/export`. */
export const ExportKeyRequestSchema = z.strictObject({
  passphrase: z.string().min(MIN_PASSPHRASE_LENGTH, `use at least ${MIN_PASSPHRASE_LENGTH} characters`).max(1024),
});
export type ExportKeyRequest = z.infer<typeof ExportKeyRequestSchema>;

const base64 = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'not base64');

/**
 * `hanactl key export`'s file: the registry key wrapped with a key derived from a passphrase
 * (scrypt, then AES-256-GCM, the registry's SHA-256 bound as additional data), and the
 * registry file itself, still encrypted under the registry key.
 */
export const ExportDocumentSchema = z.object({
  format: z.literal('hanactl-registry-export'),
  version: z.literal(1),
  note: z.string().optional(),
  createdAt: z.string(),
  hanactlVersion: z.string(),
  kdf: z.strictObject({
    name: z.literal('scrypt'),
    salt: base64,
    N: z.number().int(),
    r: z.number().int(),
    p: z.number().int(),
  }),
  cipher: z.strictObject({ name: z.literal('aes-256-gcm'), iv: base64, tag: base64 }),
  wrappedKey: base64,
  registry: z.strictObject({ sha256: z.string().regex(/^[0-9a-f]{64}$/), bytes: base64 }),
});
export type ExportDocument = z.infer<typeof ExportDocumentSchema>;
