/**
 * A problem with one project source (malformed JSON, a binding without credentials...). Its
 * message names the file and the problem, never a value from the file: the resolver turns it
 * into that source's `error` status and goes on with the next source.
 */
export class SourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SourceError';
  }
}

/**
 * Parses JSON text; a syntax error names the file and the line and column, never the text
 * around it (the engine's own message quotes the input, which may hold a password).
 */
export function parseJsonText(text: string, label: string): unknown {
  try {
    return JSON.parse(text);
  } catch (err) {
    const position = /position (\d+)/.exec((err as Error).message)?.[1];
    if (position === undefined) throw new SourceError(`${label} is not valid JSON.`);
    const before = text.slice(0, Number(position));
    const line = before.split('\n').length;
    const column = Number(position) - before.lastIndexOf('\n');
    throw new SourceError(`${label} is not valid JSON (line ${line}, column ${column}).`);
  }
}

/** A plain JSON object, or undefined. */
export function asObject(value: unknown): Record<string, unknown> | undefined {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
}

/** A non-empty string or finite number as a string, else undefined. */
export function asText(value: unknown): string | undefined {
  if (typeof value === 'string') return value.trim() === '' ? undefined : value.trim();
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** A boolean written as a boolean or as `true`/`false` text, else undefined. */
export function asFlag(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'string' && /^(true|false)$/i.test(value.trim())) return value.trim().toLowerCase() === 'true';
  return undefined;
}
