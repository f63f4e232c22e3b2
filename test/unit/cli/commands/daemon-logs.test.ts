import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { formatLogLine, lastLines } from '../../../../cli/commands/daemon-logs.js';

const dir = mkdtempSync(join(tmpdir(), 'hanactl-logs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('formatLogLine', () => {
  const time = new Date(2025, 0, 2, 3, 4, 5, 6).getTime();

  it('shows local time, level, message and the other fields as key=value', () => {
    const line = JSON.stringify({ level: 30, time, pid: 42, socket: '/run/x.sock', keySource: 'env', msg: 'daemon started' });
    expect(formatLogLine(line)).toBe('2025-01-02 03:04:05.006 INFO  daemon started  pid=42 socket=/run/x.sock keySource=env');
  });

  it('shows control and format characters in a message or a field (a client name an agent chose) as escapes', () => {
    const line = JSON.stringify({ level: 30, time, msg: 'session \u001b[2Kopened', client: 'a\u202eb\u009b' });
    const shown = formatLogLine(line);
    expect(shown).not.toMatch(/[\p{Cc}\p{Cf}]/u);
    expect(shown).toContain('session \\x1b[2Kopened');
    expect(shown).toContain('client=a\\u202eb\\x9b');
    expect(formatLogLine('not json \r\u001b[2K')).toBe('not json \\r\\x1b[2K');
  });

  it('quotes values with spaces and prints objects as JSON', () => {
    const line = JSON.stringify({ level: 50, time, msg: 'unexpected error', path: '/v1/query', err: 'it broke badly', extra: { a: 1 } });
    expect(formatLogLine(line)).toBe('2025-01-02 03:04:05.006 ERROR unexpected error  path=/v1/query err="it broke badly" extra={"a":1}');
  });

  it.each([
    [10, 'TRACE'],
    [20, 'DEBUG'],
    [40, 'WARN '],
    [60, 'FATAL'],
  ])('names level %i %s', (level, name) => {
    expect(formatLogLine(JSON.stringify({ level, time, msg: 'm' }))).toContain(` ${name} m`);
  });

  it('shows a line that is not a pino record as it is', () => {
    expect(formatLogLine('plain text from somewhere')).toBe('plain text from somewhere');
    expect(formatLogLine('[1,2]')).toBe('[1,2]');
  });
});

describe('lastLines', () => {
  it('returns the last n lines of a file larger than one read', () => {
    const path = join(dir, 'big.log');
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i} ${'x'.repeat(20)}`);
    writeFileSync(path, `${lines.join('\n')}\n`);
    expect(lastLines(path, 3).lines).toEqual(lines.slice(-3));
    expect(lastLines(path, 5000).lines).toEqual(lines.slice(-5000));
    expect(lastLines(path, 0).lines).toEqual([]);
  });

  it('returns every line of a short file, with or without a final newline', () => {
    const path = join(dir, 'short.log');
    writeFileSync(path, 'a\nb');
    expect(lastLines(path, 10).lines).toEqual(['a', 'b']);
    writeFileSync(path, '');
    expect(lastLines(path, 10).lines).toEqual([]);
  });
});
