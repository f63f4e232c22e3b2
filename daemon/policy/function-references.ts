import { deniedFunctionName } from './denied-functions.js';
import type { DialectPolicy } from './dialects.js';
import { categoryObjection, objection } from './objections.js';
import { pgFunctionObjection, runsSql } from './pg-functions.js';
import { isPunct, isWord, leadIndex } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * PostgreSQL DDL names functions without calling them: an aggregate's `sfunc = set_config`, an
 * operator's `function = f`, a type's `input = f`. The function runs later, whenever the object is
 * used, with arguments the statement never shows. Such a reference goes through the same function
 * rules as a call, on every connection: `set_config` and every denied function are refused, and
 * so is a function that runs SQL text, since the text it would run is not written here.
 */
export const REFERENCE_OPTIONS: ReadonlySet<string> = new Set([
  'sfunc',
  'finalfunc',
  'combinefunc',
  'serialfunc',
  'deserialfunc',
  'msfunc',
  'minvfunc',
  'mfinalfunc',
  'function',
  'procedure',
  'restrict',
  'join',
  'input',
  'output',
  'receive',
  'send',
  'typmod_in',
  'typmod_out',
  'analyze',
  'subscript',
]);

/** The engine's own rules on a function named as one an object calls later (a dialect's `referencedFunctionRule`). */
export type ReferencedFunctionRule = (name: string, allowWrite: boolean) => Objection | undefined;

/**
 * PostgreSQL's: its functions as classified from pg_proc, and any function that runs the SQL text
 * it is given, since the text it would run is not written here.
 */
export const postgresReferencedFunction: ReferencedFunctionRule = (name, allowWrite) => {
  const denied = pgFunctionObjection(name, allowWrite);
  if (denied) return denied;
  if (!runsSql(name)) return undefined;
  return objection(
    'denied-function',
    `Refused: ${name}() runs the SQL text it is given, and named as the function an object calls it would run text this statement does not show.`,
    `Remove the reference to ${name}.`,
  );
};

/**
 * The refusal for naming the function `name` (lower case, unqualified) as one an object calls
 * later, or undefined: the rules of every engine, then the engine's own (`engineRule`).
 */
export function functionReferenceObjection(
  name: string,
  engineRule: ReferencedFunctionRule | undefined,
  allowWrite: boolean,
): Objection | undefined {
  if (name === 'set_config') return categoryObjection('session-change', 'set_config (named as the function an object calls)');
  return deniedFunctionName(name, allowWrite) ?? engineRule?.(name, allowWrite);
}

/**
 * The token rules' side: in a CREATE or ALTER statement, `option = name` (or `option = 'name'`,
 * `option = schema.name`) for an option in REFERENCE_OPTIONS is a reference to `name`. Calls,
 * written with parentheses (CREATE CAST ... WITH FUNCTION f(text)), are the call rules' already.
 */
export function functionReferenceRule(tokens: readonly Token[], dialect: DialectPolicy, allowWrite: boolean): Objection | undefined {
  if (!isWord(tokens[leadIndex(tokens)], 'CREATE', 'ALTER')) return undefined;
  for (let k = 0; k + 2 < tokens.length; k++) {
    const option = tokens[k] as Token;
    if ((option.kind !== 'word' && option.kind !== 'quoted') || !REFERENCE_OPTIONS.has(option.text.toLowerCase())) continue;
    if (!isPunct(tokens[k + 1], '=')) continue;
    let at = k + 2;
    while (isPunct(tokens[at + 1], '.') && tokens[at + 2] !== undefined) at += 2;
    const named = tokens[at] as Token;
    if (named.kind !== 'word' && named.kind !== 'quoted' && named.kind !== 'string') continue;
    if (named.opaque) {
      return objection(
        'denied-function',
        'Refused: a function is named by a name written with escapes, which cannot be checked.',
        'Write the function name plainly.',
      );
    }
    const refused = functionReferenceObjection(named.text.toLowerCase(), dialect.referencedFunctionRule, allowWrite);
    if (refused) return refused;
  }
  return undefined;
}
