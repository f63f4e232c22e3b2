import { HanactlError, type ErrorCode } from '../../shared/errors.js';
import { redactUrl } from '../../shared/connection-url.js';

/** Removes every known secret (and any URL password) from a message. */
export function scrubSecrets(message: string, secrets: readonly (string | undefined)[]): string {
  let out = redactUrl(message);
  for (const secret of secrets) {
    if (secret && secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}

/**
 * Normalises a driver error at the edge: keeps SQLSTATE and the native code, scrubs
 * credentials, and picks our code. Never leaks the driver's stack or config.
 */
export function normaliseDriverError(
  err: unknown,
  code: ErrorCode,
  secrets: readonly (string | undefined)[],
  extra: { sqlState?: string; nativeCode?: string | number } = {},
): HanactlError {
  if (err instanceof HanactlError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  const message = scrubSecrets(raw || 'The database reported an error without a message.', secrets);
  const details: { sqlState?: string; nativeCode?: string | number } = {};
  if (extra.sqlState) details.sqlState = extra.sqlState;
  if (extra.nativeCode !== undefined) details.nativeCode = extra.nativeCode;
  return new HanactlError(code, message, details);
}
