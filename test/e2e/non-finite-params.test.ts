import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, TestHome } from '../helpers/hanactl-home.js';

/**
 * JSON has no Infinity, but `1e400` is a valid JSON number that parses to it; so is `-1e400`. An
 * MCP client written in JavaScript cannot send it (its JSON.stringify writes null), so this test
 * writes the relay's stdin by hand.
 */
describe('a parameter that is not a finite number is refused, naming the parameter', () => {
  const home = new TestHome();
  let relay: ChildProcessWithoutNullStreams;
  const answers = new Map<number, (line: Record<string, unknown>) => void>();

  const request = (id: number, line: string): Promise<Record<string, unknown>> =>
    new Promise((resolve) => {
      answers.set(id, resolve);
      relay.stdin.write(`${line}\n`);
    });

  beforeAll(async () => {
    writeFileSync(join(home.dir, 'lite.db'), '');
    await home.ok(['add', '--no-test', 'lite', `sqlite:${join(home.dir, 'lite.db')}`]);
    relay = spawn(process.execPath, [BIN, 'mcp', '--connection', 'lite'], { env: home.env });
    createInterface({ input: relay.stdout }).on('line', (line) => {
      const message = JSON.parse(line) as { id?: number };
      if (typeof message.id === 'number') answers.get(message.id)?.(message);
    });
    const init = await request(
      1,
      '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}',
    );
    expect(init.result).toBeDefined();
    relay.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  });

  afterAll(async () => {
    relay?.kill('SIGKILL');
    await home.dispose();
  });

  for (const [id, value] of [
    [2, '1e400'],
    [3, '-1e400'],
  ] as const)
    it(`params [1, ${value}] answers invalid params for the second parameter, not a NULL`, async () => {
      const answer = await request(
        id,
        `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"run_query","arguments":{"sql":"SELECT ? AS a, ? AS b","params":[1,${value}]}}}`,
      );
      const text = JSON.stringify(answer);
      expect(text).not.toContain('"b":null');
      expect(text).toMatch(/params\[1\]|parameter 2/);
      expect(text).toMatch(/finite/);
    });
});
