import { isPunct, isWord, leadIndex } from './tokens.js';
import type { Token } from './types.js';

/**
 * SAP HANA SQLScript: an anonymous block (`DO BEGIN ...; END`) or the body of a procedure,
 * function or trigger (`CREATE [OR REPLACE] PROCEDURE p AS BEGIN ...; END`) holds `;` that end
 * its inner statements, not the block. Only statements that lead with one of these forms are
 * read this way; every other text splits on each `;` as before.
 */
const BLOCK_OBJECTS = new Set(['PROCEDURE', 'FUNCTION', 'TRIGGER']);

/** True when the statement starting at `tokens[0]` is a SQLScript block form. */
function leadsWithBlock(tokens: readonly Token[]): boolean {
  const at = leadIndex(tokens);
  if (isWord(tokens[at], 'DO')) return true;
  if (!isWord(tokens[at], 'CREATE')) return false;
  let k = at + 1;
  if (isWord(tokens[k], 'OR') && isWord(tokens[k + 1], 'REPLACE')) k += 2;
  const object = tokens[k];
  return isWord(object) && BLOCK_OBJECTS.has(object.text);
}

/** `END IF`, `END FOR`, `END WHILE`, `END LOOP` close constructs whose opener is not counted. */
const UNCOUNTED_END = new Set(['IF', 'FOR', 'WHILE', 'LOOP']);

/**
 * The nesting change one token makes: `BEGIN` and `CASE` open (a CASE expression ends with a
 * bare `END`, a CASE statement with `END CASE`), `END` closes unless it ends IF/FOR/WHILE/LOOP.
 * A qualified name's part (`t.begin`) is not a keyword.
 */
function depthChange(tokens: readonly Token[], k: number): number {
  const token = tokens[k];
  if (!isWord(token) || isPunct(tokens[k - 1], '.')) return 0;
  if (token.text === 'BEGIN' || token.text === 'CASE') return 1;
  if (token.text !== 'END') return 0;
  const next = tokens[k + 1];
  return isWord(next) && UNCOUNTED_END.has(next.text) && !isPunct(tokens[k + 2], '.') ? 0 : -1;
}

/**
 * Splits tokens into statements, keeping a SQLScript block whole: inside a statement that leads
 * with DO or CREATE PROCEDURE/FUNCTION/TRIGGER, a `;` splits only where every BEGIN (and CASE)
 * is closed. A block that never closes (or closes more than it opens) gives no exemption: the
 * text then splits on every `;`, as plain SQL, and is refused as several statements.
 */
export function splitSqlScript(
  tokens: readonly Token[],
  splitPlain: (tokens: readonly Token[]) => (readonly Token[])[],
): (readonly Token[])[] {
  // Offsets, not slices of the rest: a text of many statements costs its length once.
  const statements: (readonly Token[])[] = [];
  let start = 0;
  let blocks = true;
  while (start < tokens.length) {
    const leads = blocks && leadsWithBlock(tokens.slice(start, start + 8));
    const end = leads ? blockEnd(tokens, start) : -1;
    // A malformed block splits into several statements, so the text is refused whatever follows;
    // looking for more blocks after it would cost the rest of the text once per statement.
    if (leads && end < 0) blocks = false;
    if (end < 0) {
      // Not a block (or a malformed one): this statement ends at the next `;`.
      let semi = start;
      while (semi < tokens.length && !isPunct(tokens[semi], ';')) semi++;
      statements.push(...splitPlain(tokens.slice(start, Math.min(semi + 1, tokens.length))));
      start = semi + 1;
      continue;
    }
    if (end > start) statements.push(tokens.slice(start, end));
    start = end + 1;
  }
  return statements;
}

/** Index of the `;` (or the end) that ends a well-formed block statement starting at `start`; -1 when it is not well formed. */
function blockEnd(tokens: readonly Token[], start: number): number {
  let depth = 0;
  let opened = false;
  for (let k = start; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    if (isPunct(token, ';') && depth === 0) return opened ? k : -1;
    depth += depthChange(tokens, k);
    if (depth > 0) opened = true;
    if (depth < 0) return -1;
  }
  return opened && depth === 0 ? tokens.length : -1;
}
