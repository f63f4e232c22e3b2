import type { Token } from './types.js';

/** True when `token` is a word (any word, or one of `words`, upper-case). */
export function isWord(token: Token | undefined, ...words: string[]): token is Token {
  return token?.kind === 'word' && (words.length === 0 || words.includes(token.text));
}

/** True when `token` is the punctuation character `char`. */
export function isPunct(token: Token | undefined, char: string): boolean {
  return token?.kind === 'punct' && token.text === char;
}

/** Index of the first token after any opening parentheses: `(SELECT 1) UNION ...` leads with SELECT. */
export function leadIndex(tokens: readonly Token[]): number {
  let i = 0;
  while (isPunct(tokens[i], '(')) i++;
  return i;
}

/**
 * The word at `i` when it is used as a keyword: not a qualified name (`t.update`) and not an
 * alias (`AS update`). A word after a dot and a space or comment (`t. update`) is read as a
 * keyword: MariaDB reads the name after `ident.` without keyword lookup only when it follows the
 * dot directly (sql_lex.cc MY_LEX_IDENT_SEP); elsewhere this reads more keywords, never fewer.
 */
export function keywordAt(tokens: readonly Token[], i: number): string | undefined {
  const token = tokens[i];
  if (!isWord(token) || (isPunct(tokens[i - 1], '.') && !token.spaced) || isWord(tokens[i - 1], 'AS')) return undefined;
  return token.text;
}

/** The lower-cased name at `i` when a `(` follows it: a function call, however the name is quoted. */
export function callName(tokens: readonly Token[], i: number): string | undefined {
  const token = tokens[i];
  if ((token?.kind !== 'word' && token?.kind !== 'quoted') || !isPunct(tokens[i + 1], '(')) return undefined;
  return token.text.toLowerCase();
}

/** Index of the `)` that closes the `(` at `open`, or the end of the tokens. */
export function closingParen(tokens: readonly Token[], open: number): number {
  let depth = 0;
  for (let i = open; i < tokens.length; i++) {
    if (isPunct(tokens[i], '(')) depth++;
    else if (isPunct(tokens[i], ')') && --depth === 0) return i;
  }
  return tokens.length;
}

/** The tokens outside any parentheses. */
export function topLevel(tokens: readonly Token[]): Token[] {
  const out: Token[] = [];
  let depth = 0;
  for (const token of tokens) {
    if (isPunct(token, '(')) depth++;
    else if (isPunct(token, ')')) depth = Math.max(0, depth - 1);
    else if (depth === 0) out.push(token);
  }
  return out;
}
