import { redactUrl } from '../../shared/connection-url.js';
import { type ErrorCode, HanactlError } from '../../shared/errors.js';
import { capQuoted } from '../../shared/linear-text.js';
import { maskSecretText } from './credential-mask.js';

/** The longest driver message passed on: engines quote the statement or a value in their errors. */
export const DRIVER_MESSAGE_CHARS = 1000;

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
 * credentials, and picks our code. Never leaks the driver's stack or config. The server's text
 * is masked as a result cell is (credential-mask.ts): an error quotes values (`invalid input
 * syntax for type integer: "md5…"`, MariaDB's `XPATH syntax error: '…'`), so it is a second way
 * out for what a cell would show masked. Every engine's errors pass here.
 */
export function normaliseDriverError(
  err: unknown,
  code: ErrorCode,
  secrets: readonly (string | undefined)[],
  extra: { sqlState?: string; nativeCode?: string | number } = {},
): HanactlError {
  if (err instanceof HanactlError) return err;
  const raw = err instanceof Error ? err.message : String(err);
  // Scrubbed and masked whole before it is cut, so no part of a secret survives at the cut.
  const text = scrubSecrets(raw || 'The database reported an error without a message.', secrets);
  const message = capQuoted(maskSecretText(text), DRIVER_MESSAGE_CHARS);
  const details: { sqlState?: string; nativeCode?: string | number } = {};
  if (extra.sqlState) details.sqlState = extra.sqlState;
  if (extra.nativeCode !== undefined) details.nativeCode = extra.nativeCode;
  return new HanactlError(code, message, details);
}
