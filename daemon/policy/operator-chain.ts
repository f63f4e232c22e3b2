import type { Token } from './types.js';

/**
 * Keywords that chain onto the expression before them, each making PostgreSQL's parse tree one
 * level deeper: `a COLLATE "C" COLLATE "C"`, `x IS NULL IS NULL`, `t AT TIME ZONE 'UTC' AT ...`.
 */
const CHAINING: ReadonlySet<string> = new Set([
  'COLLATE',
  'AT',
  'IS',
  'ISNULL',
  'NOTNULL',
  'IN',
  'LIKE',
  'ILIKE',
  'SIMILAR',
  'BETWEEN',
  'OVERLAPS',
]);
/** Chains that go on across commas and ANDs: set operations over select lists, joins over their ON conditions. */
const KEPT: ReadonlySet<string> = new Set(['UNION', 'INTERSECT', 'EXCEPT', 'JOIN']);
/**
 * What starts a sibling, not a deeper level: a list's comma, and AND and OR, which bind loosest
 * and which the parser gathers into one node however many there are.
 */
const SEPARATORS: ReadonlySet<string> = new Set([',', ';', 'AND', 'OR']);
/** Inside CASE ... END, each WHEN, THEN and ELSE starts a sibling too. */
const CASE_SEPARATORS: ReadonlySet<string> = new Set(['WHEN', 'THEN', 'ELSE']);

/** One open `(`, `[` or CASE: operators since its last separator, and kept chains since it opened. */
interface Frame {
  readonly kind: string;
  segment: number;
  kept: number;
}

/**
 * How deep the operators of one expression nest, estimated from above: at each token, the operators
 * (`+`, `||`, `::`, `=`, ... and the keywords above) since the last separator of each enclosing
 * `(`, `[` or CASE, summed over them. A left-leaning chain such as `1+1+...+1` is as deep as it is
 * long, and PostgreSQL's parser (libpg-query, on the thread's own stack) runs out of stack past a
 * few thousand levels. Linear in the tokens.
 */
export function operatorChain(tokens: readonly Token[]): number {
  const frames: Frame[] = [{ kind: '', segment: 0, kept: 0 }];
  let sum = 0;
  let deepest = 0;
  // An operator right after another (or first) is a prefix one (`- - 1`, `+ + 1`): the parser nests those
  // on its own stack of states, which it bounds itself, not on the thread's stack.
  let afterOperand = false;
  for (const token of tokens) {
    const prefix = !afterOperand;
    afterOperand = token.kind !== 'punct' || token.text === ')' || token.text === ']';
    const frame = frames[frames.length - 1] as Frame;
    const text = token.kind === 'punct' || token.kind === 'word' ? token.text : '';
    if (text === '(' || text === '[' || text === 'CASE') {
      frames.push({ kind: text, segment: 0, kept: 0 });
    } else if ((text === ')' && frame.kind === '(') || (text === ']' && frame.kind === '[') || (text === 'END' && frame.kind === 'CASE')) {
      frames.pop();
      sum -= frame.segment + frame.kept;
    } else if (SEPARATORS.has(text) || (frame.kind === 'CASE' && CASE_SEPARATORS.has(text))) {
      sum -= frame.segment;
      frame.segment = 0;
    } else if (token.kind === 'word' && KEPT.has(text)) {
      frame.kept++;
      sum++;
    } else if (
      (token.kind === 'punct' && !prefix && text !== '.' && text !== ')' && text !== ']') ||
      (token.kind === 'word' && CHAINING.has(text))
    ) {
      frame.segment++;
      sum++;
    }
    if (sum > deepest) deepest = sum;
  }
  return deepest;
}
