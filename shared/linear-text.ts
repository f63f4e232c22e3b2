/**
 * Text helpers that take time linear in their input, for text an agent controls (SQL, tool
 * arguments, database errors that quote them). A backtracking regular expression such as
 * `/[\s;]+$/` retries from every position of a long run and takes quadratic time: a megabyte of
 * spaces would hold the event loop for an hour. These scans look at each character once.
 */

/** True for the characters `\s` matches and `trim()` removes (one UTF-16 code unit). */
export function isWhitespace(ch: string): boolean {
  return ch.length === 1 && ch.trim() === '';
}

/** `text` without the trailing characters `drop` accepts. */
export function trimEndWhere(text: string, drop: (ch: string) => boolean): string {
  let end = text.length;
  while (end > 0 && drop(text.charAt(end - 1))) end--;
  return end === text.length ? text : text.slice(0, end);
}

/** `text` without the leading and trailing characters `drop` accepts. */
export function trimWhere(text: string, drop: (ch: string) => boolean): string {
  let start = 0;
  while (start < text.length && drop(text.charAt(start))) start++;
  return trimEndWhere(text.slice(start), drop);
}

/** The longest error text that quotes input back; the rest is cut and counted. */
export const QUOTE_CHARS = 200;

/**
 * `text` cut to `max` characters (never inside a surrogate pair), with how much was cut said at
 * the end: error messages that quote an agent's input stay short whatever the input's size.
 */
export function capQuoted(text: string, max = QUOTE_CHARS): string {
  if (text.length <= max) return text;
  let end = max;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… (${text.length - end} more characters)`;
}
