import { cliCommand } from '../../shared/cli-command.js';
import { isProjectRef } from '../../shared/project-schemas.js';
import { cellCharsFor } from '../engines/row-bytes.js';
import { DEFAULT_MAX_RESULT_BYTES, MAX_MAX_RESULT_BYTES, type QueryResult, type ResultCut } from '../../shared/schemas.js';

/** Ends every value the cap shortened, in the structured rows and (so) in the text table. */
export const CUT_MARK = '…[cut]';

/** How much one tool result may carry, and for which connection (named in the note). */
export interface ResultBudget {
  /** Text and structured content together, as serialized. */
  readonly bytes: number;
  /** Characters a cell keeps before it is cut; grows with `bytes`. */
  readonly cellChars: number;
  readonly connection: string;
}

/** The budget of a connection: the person's `--max-result-bytes`, else the default. */
export function resultBudget(connection: string, maxResultBytes: number = DEFAULT_MAX_RESULT_BYTES): ResultBudget {
  return { bytes: maxResultBytes, cellChars: cellCharsFor(maxResultBytes), connection };
}

/*
 * A row is counted twice (the structured rows and the text table carry the same cells) plus the
 * table's padding and separators (cells pad to at most 60 characters, " | " between them): an
 * upper bound of what the row adds to the serialized result.
 */
const PER_CELL_TEXT = 63;
const bytesOf = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? 'null');
const rowCost = (row: Record<string, unknown>, columns: number): number => 2 * bytesOf(row) + PER_CELL_TEXT * columns + 8;

/** `text` cut to `max` characters with the mark; never splits a surrogate pair. */
function cutText(text: string, max: number): string {
  const end = max > 0 && /[\uD800-\uDBFF]/.test(text[max - 1] ?? '') ? max - 1 : max;
  return `${text.slice(0, end)}${CUT_MARK}`;
}

/** A cell within `max` characters: long strings and long JSON (arrays, objects) are cut to text. */
function cutCell(value: unknown, max: number): { value: unknown; cut: boolean } {
  if (typeof value === 'string') return value.length > max ? { value: cutText(value, max), cut: true } : { value, cut: false };
  if (value !== null && typeof value === 'object') {
    const json = JSON.stringify(value);
    return json.length > max ? { value: cutText(json, max), cut: true } : { value, cut: false };
  }
  return { value, cut: false };
}

interface Shaped {
  readonly row: Record<string, unknown>;
  readonly cutColumns: readonly string[];
}

function shapeRow(row: Record<string, unknown>, names: readonly string[], max: number): Shaped {
  const out: Record<string, unknown> = {};
  const cutColumns: string[] = [];
  for (const name of names) {
    const { value, cut } = cutCell(row[name], max);
    out[name] = value;
    if (cut) cutColumns.push(name);
  }
  return { row: out, cutColumns };
}

/** The sentence a cut result carries: what was cut, and how to ask for less (or who can allow more). */
function cutNote(budget: ResultBudget, what: string, narrow: string): string {
  const kib = budget.bytes % 1024 === 0 ? `${budget.bytes / 1024} KiB` : `${budget.bytes} bytes`;
  const raise = isProjectRef(budget.connection)
    ? ''
    : ` A person can raise the cap with \`${cliCommand()} set ${budget.connection} --max-result-bytes <bytes>\` (at most ${MAX_MAX_RESULT_BYTES}).`;
  return `Cut to fit ${kib} per result: ${what}. ${narrow}${raise}`;
}

const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/**
 * A query result that fits its budget: cells longer than `cellChars` are cut (the same cut the
 * text shows), then rows are kept while they fit; `truncated` and `cut` say what was left out.
 * A first row too wide on its own is cut shorter still, so some row always shows when one can.
 */
export function capQueryResult(result: QueryResult, budget: ResultBudget): QueryResult {
  if (result.columns.length === 0 || result.rows.length === 0) return result;
  const names = result.columns.map((c) => c.name);
  let room = budget.bytes - 1024 - 2 * bytesOf(result.columns) - 2 * PER_CELL_TEXT * names.length;
  let cellChars = budget.cellChars;
  const rows: Record<string, unknown>[] = [];
  const cutColumns = new Set<string>();
  let cellsCut = 0;
  for (const row of result.rows) {
    let shaped = shapeRow(row, names, cellChars);
    let cost = rowCost(shaped.row, names.length);
    if (rows.length === 0 && cost > room) {
      cellChars = Math.max(8, Math.floor(room / (2 * names.length)) - PER_CELL_TEXT - 16);
      shaped = shapeRow(row, names, cellChars);
      cost = rowCost(shaped.row, names.length);
    }
    if (cost > room) break;
    room -= cost;
    rows.push(shaped.row);
    cellsCut += shaped.cutColumns.length;
    for (const c of shaped.cutColumns) cutColumns.add(c);
  }
  const leftOut = result.rows.length - rows.length;
  if (leftOut === 0 && cellsCut === 0) return result;
  const parts = [
    ...(leftOut > 0 ? [`${rows.length} of the ${result.rows.length} rows read are shown`] : []),
    ...(cellsCut > 0
      ? [`${plural(cellsCut, 'value', 'values')} of ${[...cutColumns].join(', ')} cut to ${cellChars} characters (they end in ${CUT_MARK})`]
      : []),
  ];
  const narrow = 'For less, select fewer or narrower columns (e.g. substr(col, 1, 100)), lower maxRows, or add a WHERE.';
  const cut: ResultCut = {
    limitBytes: budget.bytes,
    rowsLeftOut: leftOut,
    cellsCut,
    cellChars,
    columns: [...cutColumns],
    note: cutNote(budget, parts.join('; '), narrow),
  };
  return { ...result, rows, rowCount: rows.length, truncated: result.truncated || leftOut > 0, cut };
}

/**
 * A catalog answer (lists, a table's description, a plan) that fits its budget: untouched when
 * it fits; else strings longer than `cellChars` are cut, then entries are dropped from the end of
 * its longest list (setting `truncated` where the answer has one) until it fits.
 */
export function capCatalogResult<T extends object>(value: T, budget: ResultBudget): T & { cut?: ResultCut } {
  const fits = (v: unknown) => 2 * bytesOf(v) + 1024 <= budget.bytes;
  if (fits(value)) return value;
  let cellsCut = 0;
  const fields = new Set<string>();
  const shorten = (v: unknown, key: string): unknown => {
    if (typeof v === 'string' && v.length > budget.cellChars) {
      cellsCut++;
      fields.add(key);
      return cutText(v, budget.cellChars);
    }
    if (Array.isArray(v)) return v.map((x) => shorten(x, key));
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shorten(x, k)]));
    return v;
  };
  const out = shorten(value, '') as Record<string, unknown>;
  let leftOut = 0;
  const lists = Object.keys(out).filter((k) => Array.isArray(out[k]));
  while (!fits(out)) {
    const longest = lists.map((k) => [k, bytesOf(out[k])] as const).sort((a, b) => b[1] - a[1])[0];
    const list = longest ? (out[longest[0]] as unknown[]) : [];
    if (!longest || list.length === 0) break;
    // Halve what is over, at least one entry per step: a few steps even for thousands of entries.
    const over = 2 * bytesOf(out) + 1024 - budget.bytes;
    const perEntry = Math.max(1, longest[1] / list.length);
    const drop = Math.min(list.length, Math.max(1, Math.ceil(over / (2 * perEntry))));
    out[longest[0]] = list.slice(0, list.length - drop);
    leftOut += drop;
    if ('truncated' in out) out.truncated = true;
  }
  const parts = [
    ...(leftOut > 0 ? [`${plural(leftOut, 'entry', 'entries')} left out`] : []),
    ...(cellsCut > 0 ? [`${plural(cellsCut, 'text', 'texts')} of ${[...fields].join(', ')} cut to ${budget.cellChars} characters`] : []),
  ];
  const narrow = 'For less, pass a pattern or a schema, or describe one table at a time.';
  const cut: ResultCut = {
    limitBytes: budget.bytes,
    rowsLeftOut: leftOut,
    cellsCut,
    cellChars: budget.cellChars,
    columns: [...fields],
    note: cutNote(budget, parts.join('; ') || 'nothing could be left out', narrow),
  };
  return { ...(out as T), cut };
}
