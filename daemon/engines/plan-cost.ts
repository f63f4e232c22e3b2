/** The first word of a statement, past white space, comments and opening parentheses; upper-cased. */
export function leadingWord(sql: string): string {
  let i = 0;
  while (i < sql.length) {
    const c = sql[i] as string;
    if (/\s|\(/.test(c)) i++;
    else if (c === '-' && sql[i + 1] === '-') i = lineEnd(sql, i);
    else if (c === '#') i = lineEnd(sql, i);
    else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else break;
  }
  const m = /^[A-Za-z_]+/.exec(sql.slice(i, i + 64));
  return m ? m[0].toUpperCase() : '';
}

function lineEnd(sql: string, i: number): number {
  const end = sql.indexOf('\n', i);
  return end < 0 ? sql.length : end + 1;
}

/**
 * True when the cost guard explains this read before it runs: every read whose leading word is
 * not in the engine's `notExplainable` (its own list, in its folder). Such reads pass without an
 * estimate; a read whose EXPLAIN fails is refused with that failure (the guard fails closed).
 */
export function explainable(sql: string, notExplainable: ReadonlySet<string>): boolean {
  return !notExplainable.has(leadingWord(sql));
}

/** A finite number from a plan's figure (a number, or its text), else undefined. */
export const finiteNumber = (v: unknown): number | undefined => {
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : undefined;
};
