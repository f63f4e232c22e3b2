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
): Record<string, string> {
  const supplied: Record<string, string> = {};
  for (const [rawName, value] of parseRawQuery(raw)) {
    const name = rawName.trim().toUpperCase();
    if (name in supplied) throw refuse(`The context parameter ${name} is given more than once.`);
    supplied[name] = value;
  }
  return resolveContextValues({
    declared: connection.context,
    supplied,
    engine: connection.engine,
    strict: true,
    remedy: (name) => `add ${name}=<value> to the endpoint's query string (/mcp/${connection.name}?${name}=...)`,
  });
}
