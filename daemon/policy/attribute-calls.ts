import { objection } from './objections.js';
import { isPunct } from './tokens.js';
import type { Objection, Token } from './types.js';

/**
 * PostgreSQL's attribute notation: a name after a dot is a call of a function of that name on
 * what stands before the dot whenever no column has that name (ParseFuncOrColumn). `(x).f` and
 * `(t.c).f` are f(x) and f(t.c) for any one-argument function (or one whose other arguments have
 * defaults), whatever x's type; `t.f` is f(t) with t's whole row (to_json, row_to_json); `t.c.f`
 * and `s.t.c.f` are f(t.c). Such a name goes through the same function rules as a call; a column
 * that shares a refused function's name is refused too when written after a dot, and read as a
 * bare column name (which PostgreSQL never reads as a call) it answers.
 */

/** PostgreSQL's NAMEDATALEN - 1: the server cuts a longer name, which then cannot be any refused name. */
const MAX_IDENTIFIER_BYTES = 63;

/** The name at `k` when it follows a dot and is not itself called (`t.f(` is a call, the call rules' already), as written. */
export function nameAfterDot(tokens: readonly Token[], k: number): Token | undefined {
  const token = tokens[k];
  if ((token?.kind !== 'word' && token?.kind !== 'quoted') || !isPunct(tokens[k - 1], '.') || isPunct(tokens[k + 1], '(')) return undefined;
  return token.text.length <= MAX_IDENTIFIER_BYTES || token.opaque ? token : undefined;
}

/** The refusal for a name after a dot written with escapes: it may be any function's. */
export const opaqueAttributeObjection = (): Objection =>
  objection(
    'denied-function',
    'Refused: a name after a dot is written with escapes; PostgreSQL may read it as a call of the function of that name (attribute notation), which cannot be checked.',
    'Write the name plainly.',
  );

/**
 * The refusal for `.name` read as the call name(value), from `inner`, the refusal of calling
 * name(): the same rule, with the notation explained and how to read a column of that name.
 */
export function attributeCallObjection(name: string, inner: Objection | undefined): Objection | undefined {
  if (!inner) return undefined;
  const sentence = inner.sentence.replace(/^Refused: /, '');
  return objection(
    inner.rule,
    `Refused: PostgreSQL reads .${name} after a value or a table's name as the call ${name}(value) where no column has that name (attribute notation: (x).${name}, t.${name}, t.column.${name}), and ${sentence}`,
    `${inner.hint} To read a column named ${name}, write it without a table name or alias before it.`,
  );
}
