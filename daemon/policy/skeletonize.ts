import type { Engine } from '../../shared/connection-url.js';
import { DIALECTS } from '../engines/index.js';
import { lex } from './lexer.js';
import { splitSqlScript } from './sqlscript-blocks.js';
import type { Token } from './types.js';

/** One top-level statement of the input. */
export interface Statement {
  readonly tokens: readonly Token[];
  /** The statement's skeleton. */
  readonly text: string;
}

/** The input reduced to what the engine would parse as code. */
export interface Skeleton {
  /** Comments removed, literals replaced by `''` / `""`, whitespace collapsed to one space. */
  readonly skeleton: string;
  /** The non-empty statements between top-level semicolons. */
  readonly statements: readonly Statement[];
  /** What was still open at the end of the input (e.g. `a string literal`); the rest is not lexed. */
  readonly unterminated?: string;
}

/** Renders tokens as skeleton text. */
export function render(tokens: readonly Token[]): string {
  return tokens.map((t, k) => (k > 0 && t.spaced ? ' ' : '') + t.shown).join('');
}

/**
 * Splits tokens on top-level semicolons (every `;` token is one), dropping empty statements.
 * With `sqlscriptBlocks` (SAP HANA), a SQLScript block's inner `;` do not split it.
 */
export function splitStatements(tokens: readonly Token[], sqlscriptBlocks = false): (readonly Token[])[] {
  if (sqlscriptBlocks) return splitSqlScript(tokens, (part) => splitStatements(part));
  // Most texts are one statement with no `;`: no copy of a long token list.
  if (!tokens.some((token) => token.kind === 'punct' && token.text === ';')) return tokens.length > 0 ? [tokens] : [];
  const groups: Token[][] = [[]];
  for (const token of tokens) {
    if (token.kind === 'punct' && token.text === ';') groups.push([]);
    else groups.at(-1)?.push(token);
  }
  return groups.filter((g) => g.length > 0);
}

/**
 * Strips comments and literals from `sql` under `dialect`'s lexical rules and splits it on
 * top-level semicolons. Pure; never throws. Exported for tests and diagnostics.
 */
export function skeletonize(sql: string, dialect: Engine): Skeleton {
  const { tokens, unterminated } = lex(sql, DIALECTS[dialect].syntax);
  const statements = splitStatements(tokens, DIALECTS[dialect].sqlscriptBlocks).map((g) => ({ tokens: g, text: render(g) }));
  return { skeleton: render(tokens), statements, ...(unterminated ? { unterminated } : {}) };
}
