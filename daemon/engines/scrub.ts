import { redactUrl } from '../../shared/connection-url.js';
import { type ErrorCode, HanactlError } from '../../shared/errors.js';
import { capQuoted } from '../../shared/linear-text.js';
import { maskSecretText } from './credential-mask.js';

/** The longest driver message passed on: engines quote the statement or a value in their errors. */
export const DRIVER_MESSAGE_CHARS = 1000;

/** What a driver error keeps besides its message. */
export interface DriverErrorFacts {
  sqlState?: string;
  nativeCode?: string | number;
}

/**
 * Removes every known secret (and any URL password) from a message, by value. Only for text no
 * agent shaped: a failed connect (the server never saw a statement), the daemon's own log, output
 * to the person. On text the agent shaped (a statement's error quotes the statement and the values
 * it computed) a replacement that depends on the secret's value answers "is this the secret?":
 * `'a-guess1-b-guess2'::int` would come back as `a-guess1-b-***`. There the secret cannot be in
 * the text by construction instead: the daemon puts no password in a statement or a message it
 * builds, and no driver's configuration is echoed.
 */
export function scrubSecrets(message: string, secrets: readonly (string | undefined)[]): string {
  let out = redactUrl(message);
  for (const secret of secrets) {
    if (secret && secret.length > 0) out = out.split(secret).join('***');
  }
  return out;
}

/**
 * The masks every driver message passes, whoever shaped it: a URL's password and the credential
 * shapes a result cell is masked for (credential-mask.ts). Neither depends on any secret's value,
 * so the same text is answered the same whatever the secrets are. An error quotes values
 * (`invalid input syntax for type integer: "md5…"`, MariaDB's `XPATH syntax error: '…'`), so it
 * is a second way out for what a cell would show masked. Masked whole before it is cut, so no
 * part of a masked value survives at the cut.
 */
export function maskDriverText(text: string): string {
  return capQuoted(maskSecretText(redactUrl(text)), DRIVER_MESSAGE_CHARS);
}

function toHanactlError(err: unknown, code: ErrorCode, extra: DriverErrorFacts, scrub: (raw: string) => string): HanactlError {
  if (err instanceof HanactlError) return err;
  const raw = (err instanceof Error ? err.message : String(err)) || 'The database reported an error without a message.';
  const details: DriverErrorFacts = {};
  if (extra.sqlState) details.sqlState = extra.sqlState;
  if (extra.nativeCode !== undefined) details.nativeCode = extra.nativeCode;
  return new HanactlError(code, maskDriverText(scrub(raw)), details);
}

/**
 * Normalises a driver error at the edge, once a session is open: keeps SQLSTATE and the native
 * code, picks our code, never leaks the driver's stack or config, and masks the text by shape
 * only (`maskDriverText`). Nothing here knows the connection's password: the agent shapes what a
 * statement's error quotes, and a mask by value would confirm a guessed password. Every engine's
 * statement errors pass here.
 */
export function normaliseDriverError(err: unknown, code: ErrorCode, extra: DriverErrorFacts = {}): HanactlError {
  return toHanactlError(err, code, extra, (raw) => raw);
}

/**
 * A failed connect (or the daemon's own first round trip on a new session), normalised as
 * `normaliseDriverError` does, with the connection's secrets scrubbed by value too: the agent has
 * sent nothing yet, so the text is the server's and the driver's alone, and a driver may quote
 * what it was given.
 */
export function normaliseConnectError(
  err: unknown,
  code: ErrorCode,
  secrets: readonly (string | undefined)[],
  extra: DriverErrorFacts = {},
): HanactlError {
  return toHanactlError(err, code, extra, (raw) => scrubSecrets(raw, secrets));
}
