import { closeSync, existsSync, openSync, readSync, statSync } from 'node:fs';
import { StringDecoder } from 'node:string_decoder';
import { visible, visibleJson } from '../../shared/terminal-text.js';
import type { CliContext } from '../context.js';
import { CliExit, EXIT } from '../exit.js';
import { createStyle, type Style } from '../style.js';

const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };
const HIDDEN = new Set(['level', 'time', 'msg', 'hostname', 'v']);

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

function localTime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}.${pad(d.getMilliseconds(), 3)}`;
}

function fieldValue(value: unknown): string {
  if (typeof value === 'string') return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

/**
 * One pino JSON line in a readable form: local time, level, message, then the other fields as
 * `key=value`. A line that is not a pino record is shown as it is.
 */
export function formatLogLine(line: string, style: Style = createStyle({}, {})): string {
  let record: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(line);
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return visible(line);
    record = parsed as Record<string, unknown>;
  } catch {
    return visible(line);
  }
  const level = typeof record.level === 'number' ? (LEVELS[record.level] ?? `L${record.level}`) : String(record.level ?? '');
  const painted =
    level === 'WARN' ? style.warn(level.padEnd(5)) : level === 'ERROR' || level === 'FATAL' ? style.fail(level.padEnd(5)) : level.padEnd(5);
  const time = typeof record.time === 'number' ? localTime(record.time) : String(record.time ?? '');
  // A message or field may quote what an agent's side chose (a client's name): shown escaped.
  const fields = visible(
    Object.entries(record)
      .filter(([k]) => !HIDDEN.has(k))
      .map(([k, v]) => `${k}=${fieldValue(v)}`)
      .join(' '),
  );
  return `${style.dim(time)} ${painted} ${visible(String(record.msg ?? ''))}${fields ? `  ${style.dim(fields)}` : ''}`;
}

/** The last `count` lines of a file, reading from its end in chunks (the log is never read whole). */
export function lastLines(path: string, count: number): { lines: string[]; size: number } {
  const size = statSync(path).size;
  if (count <= 0) return { lines: [], size };
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    let position = size;
    let newlines = 0;
    while (position > 0 && newlines <= count) {
      const length = Math.min(64 * 1024, position);
      position -= length;
      const chunk = Buffer.alloc(length);
      readSync(fd, chunk, 0, length, position);
      chunks.unshift(chunk);
      for (const byte of chunk) if (byte === 0x0a) newlines++;
    }
    const lines = Buffer.concat(chunks).toString('utf8').split('\n');
    if (lines.at(-1) === '') lines.pop();
    if (position > 0) lines.shift(); // a partial first line
    return { lines: lines.slice(-count), size };
  } finally {
    closeSync(fd);
  }
}

export interface LogsOptions {
  readonly follow?: boolean;
  readonly lines?: string;
  readonly json?: boolean;
}

/** `hanactl daemon logs [--follow] [--lines N] [--json]`. */
export async function logs(ctx: CliContext, options: LogsOptions, signal?: AbortSignal): Promise<void> {
  const count = options.lines === undefined ? 50 : Number(options.lines);
  if (!Number.isInteger(count) || count < 0) throw new CliExit(EXIT.usage, `--lines takes a whole number, not "${options.lines}".`);
  const style = createStyle(process.stdout);
  const show = (line: string) => ctx.out(options.json ? visibleJson(line) : formatLogLine(line, style));
  const path = ctx.paths.log;
  let offset = 0;
  if (existsSync(path)) {
    const tail = lastLines(path, count);
    tail.lines.forEach(show);
    offset = tail.size;
  } else if (!options.follow) {
    ctx.err(`No daemon log yet at ${path}; the daemon writes it once it has started.`);
    return;
  }
  if (options.follow) {
    // Said once the starting offset is fixed: every line appended from here on is printed.
    ctx.err(`Following ${path} (Ctrl-C to stop).`);
    await follow(path, offset, show, signal);
  }
}

/** Prints lines as they are appended, until Ctrl-C; starts over when the file is truncated or replaced. */
async function follow(path: string, start: number, show: (line: string) => void, signal?: AbortSignal): Promise<void> {
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);
  signal?.addEventListener('abort', onSignal, { once: true });
  let offset = start;
  let partial = '';
  const decoder = new StringDecoder('utf8');
  try {
    while (!stop.signal.aborted) {
      const size = existsSync(path) ? statSync(path).size : 0;
      if (size < offset) offset = 0;
      if (size > offset) {
        const fd = openSync(path, 'r');
        try {
          const chunk = Buffer.alloc(size - offset);
          readSync(fd, chunk, 0, chunk.length, offset);
          offset = size;
          const lines = (partial + decoder.write(chunk)).split('\n');
          partial = lines.pop() ?? '';
          lines.filter((l) => l !== '').forEach(show);
        } finally {
          closeSync(fd);
        }
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 250);
        stop.signal.addEventListener(
          'abort',
          () => {
            clearTimeout(timer);
            resolve();
          },
          { once: true },
        );
      });
    }
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
  }
}
