/** A parsed `.env` file: its variables, and the numbers of lines that were not `KEY=VALUE`. */
export interface DotenvFile {
  readonly vars: ReadonlyMap<string, string>;
  readonly badLines: readonly number[];
}

const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/;

/**
 * Parses `.env` text as dotenv does: `KEY=VALUE`, an optional `export `, `#` comments,
 * values in single, double or back quotes (which may span lines; double quotes expand `\n`).
 * Lines it cannot read are reported by number only: their text may be a secret.
 */
export function parseDotenv(text: string): DotenvFile {
  const vars = new Map<string, string>();
  const badLines: number[] = [];
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (/^\s*(#|$)/.test(line)) continue;
    const match = LINE.exec(line);
    if (!match) {
      badLines.push(i + 1);
      continue;
    }
    const key = match[1] as string;
    let rest = (match[2] ?? '').trim();
    const quote = rest[0];
    if (quote === '"' || quote === "'" || quote === '`') {
      // Gather lines until the closing quote (a value may span lines).
      const start = i;
      let body = rest.slice(1);
      let end = closingQuote(body, quote);
      while (end < 0 && i + 1 < lines.length) {
        i++;
        body += `\n${lines[i] ?? ''}`;
        end = closingQuote(body, quote);
      }
      if (end < 0) {
        badLines.push(start + 1);
        continue;
      }
      rest = body.slice(0, end);
      vars.set(key, quote === '"' ? rest.replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1') : rest);
      continue;
    }
    vars.set(key, rest.replace(/\s+#.*$/, '').trim());
  }
  return { vars, badLines };
}

/** The index of the quote that closes a value, skipping `\"` inside double quotes; -1 if none. */
function closingQuote(body: string, quote: string): number {
  for (let j = 0; j < body.length; j++) {
    if (body[j] === '\\' && quote === '"') j++;
    else if (body[j] === quote) return j;
  }
  return -1;
}
