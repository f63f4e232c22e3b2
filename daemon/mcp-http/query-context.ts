import type { Engine } from '../../shared/connection-url.js';
import { HanactlError } from '../../shared/errors.js';
import { resolveContextValues } from '../context/context-values.js';

function refuse(message: string): HanactlError {
  return new HanactlError('CONTEXT_INVALID', message);
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, ' '));
  } catch {
    throw refuse(`The endpoint's query string is not valid percent-encoding near "${part.slice(0, 40)}".`);
  }
}

/**
 * A raw query string (after `?`) as name/value pairs, in order, repeats kept: a parsed map
 * would hide a name given twice. `a` alone is `a` with an empty value; empty pieces are skipped.
 */
export function parseRawQuery(raw: string): [string, string][] {
  const pairs: [string, string][] = [];
  for (const piece of raw.split('&')) {
    if (piece === '') continue;
    const eq = piece.indexOf('=');
    const name = decode(eq < 0 ? piece : piece.slice(0, eq));
    if (name.trim() === '') throw refuse(`The endpoint's query string has a value without a name ("${piece.slice(0, 40)}").`);
    pairs.push([name, eq < 0 ? '' : decode(piece.slice(eq + 1))]);
  }
  return pairs;
}

/** The query string of a request URL, raw (undecoded); '' when there is none. */
export function rawQueryOf(url: string): string {
  const start = url.indexOf('?');
  if (start < 0) return '';
  const end = url.indexOf('#', start);
  return url.slice(start + 1, end < 0 ? undefined : end);
}

/**
 * The context values an MCP over HTTP endpoint fixes for its session, from the URL's raw query
 * string, checked against the connection's declared names by the stdio path's rules, strictly:
 * a name the connection does not declare, a name given twice, a declared name missing or empty,
 * a value over the engine's byte limit — each refused with a sentence naming the parameter.
 */
export function contextFromQuery(
  raw: string,
  connection: { readonly name: string; readonly context: readonly string[]; readonly engine: Engine },
  fromClaims?: Readonly<Record<string, string>>,
  /** Where the fixed values come from, for the refusal: `your sign-in`, `the token "laptop"`. */
  origin = 'your sign-in',
): Record<string, string> {
  const supplied: Record<string, string> = {};
  for (const [rawName, value] of parseRawQuery(raw)) {
    const name = rawName.trim().toUpperCase();
    if (name in supplied) throw refuse(`The context parameter ${name} is given more than once.`);
    if (fromClaims && name in fromClaims) {
      throw new HanactlError(
        'FORBIDDEN',
        `The context parameter ${name} of "${connection.name}" comes from ${origin}, not from the URL; remove ${name}=... from the endpoint's query string.`,
      );
    }
    supplied[name] = value;
  }
  Object.assign(supplied, fromClaims);
  return resolveContextValues({
    declared: connection.context,
    supplied,
    engine: connection.engine,
    strict: true,
    remedy: (name) => `add ${name}=<value> to the endpoint's query string (/mcp/${connection.name}?${name}=...)`,
  });
}

/**
 * The context values a signed-in caller carries on a connection whose values come from claims
 * (`hanactl set --context-claim`): each mapped name's value is the access token's claim, a
 * string or a number. A missing (or non-scalar) claim is refused, naming it: without it the
 * caller has no value, and choosing one is not theirs to do.
 */
export function contextFromClaims(
  connection: { readonly name: string; readonly context: readonly string[]; readonly contextClaims?: Readonly<Record<string, string>> },
  caller: { readonly subject: string; readonly claims: Readonly<Record<string, unknown>> },
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [name, claim] of Object.entries(connection.contextClaims ?? {})) {
    if (!connection.context.includes(name)) continue;
    const value = caller.claims[claim];
    if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) {
      values[name] = String(value);
      continue;
    }
    const problem = value === undefined || value === null ? 'has no' : 'has no string or number in its';
    throw new HanactlError(
      'FORBIDDEN',
      `Your access token (${caller.subject}) ${problem} "${claim}" claim, which gives the context parameter ${name} of "${connection.name}"; ask the identity provider's administrator to add it to your tokens.`,
    );
  }
  return values;
}
