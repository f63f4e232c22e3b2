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
export function splitSqlScript(tokens: readonly Token[], splitPlain: (tokens: readonly Token[]) => Token[][]): Token[][] {
  const statements: Token[][] = [];
  let start = 0;
  while (start < tokens.length) {
    const rest = tokens.slice(start);
    const end = leadsWithBlock(rest) ? blockEnd(rest) : -1;
    if (end < 0) {
      // Not a block (or a malformed one): this statement ends at the next `;`.
      const semi = rest.findIndex((t) => isPunct(t, ';'));
      const plain = splitPlain(semi < 0 ? rest : rest.slice(0, semi + 1));
      statements.push(...plain);
      start += semi < 0 ? rest.length : semi + 1;
      continue;
    }
    const block = rest.slice(0, end);
    if (block.length > 0) statements.push(block);
    start += end + 1;
  }
  return statements;
}

/** Index of the `;` (or the end) that ends a well-formed block statement; -1 when it is not well formed. */
function blockEnd(tokens: readonly Token[]): number {
  let depth = 0;
  let opened = false;
  for (let k = 0; k < tokens.length; k++) {
    const token = tokens[k] as Token;
    if (isPunct(token, ';') && depth === 0) return opened ? k : -1;
    depth += depthChange(tokens, k);
    if (depth > 0) opened = true;
    if (depth < 0) return -1;
  }
  return opened && depth === 0 ? tokens.length : -1;
}
