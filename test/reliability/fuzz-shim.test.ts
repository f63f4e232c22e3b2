import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { type ShimHandle, startShim, textOf } from '../helpers/mcp-client.js';
import { apiClient } from './helpers/daemon-api.js';
import { unexpectedErrors } from './helpers/daemon-log.js';
import { report } from './helpers/figures.js';
import { anyJson, FUZZ_RUNS, FUZZ_TEST_TIMEOUT_MS, fuzzParams, nastyString } from './helpers/fuzz.js';
import { disposeHome, startLiteDaemon } from './helpers/lite-daemon.js';
import { plantSecret, SecretScan } from './helpers/secret-scan.js';

const SECRET = plantSecret('fuzzshim');
const PROJECT_FILES = ['.env', 'default-env.json', '.cdsrc-private.json', '.cdsrc.json', 'package.json'];

/** Arguments for a tool: its real parameter names with any values, or any object at all. */
function argsFor(properties: readonly string[]): fc.Arbitrary<Record<string, unknown>> {
  const named =
    properties.length > 0
      ? fc.dictionary(fc.constantFrom(...properties), fc.oneof(anyJson, nastyString), { maxKeys: properties.length })
      : fc.constant({});
  return fc.oneof(
    { weight: 4, arbitrary: named },
    { weight: 1, arbitrary: fc.dictionary(nastyString, anyJson, { maxKeys: 4 }) },
    { weight: 1, arbitrary: fc.constant({ sql: 'x'.repeat(900_000) }) },
  );
}

/** Project file content: JSON shapes these files take, broken JSON, or .env lines. */
const fileContent: fc.Arbitrary<string> = fc.oneof(
  fc.jsonValue({ maxDepth: 5 }).map((v) => JSON.stringify(v)),
  fc
    .record({
      cds: fc.record({
        requires: fc.record({
          db: fc.oneof(anyJson, fc.record({ kind: fc.constantFrom('sqlite', 'hana', 'postgres', 'x'), credentials: anyJson })),
        }),
      }),
    })
    .map((v) => JSON.stringify(v)),
  fc.record({ VCAP_SERVICES: anyJson, hana: anyJson }).map((v) => JSON.stringify(v)),
  fc.array(fc.tuple(nastyString, nastyString), { maxLength: 8 }).map((lines) => lines.map(([k, v]) => `${k}=${v}`).join('\n')),
  fc
    .array(
      fc.constantFrom(
        'DATABASE_URL=postgres://u@127.0.0.1:1/db',
        `PGPASSWORD=${SECRET}`,
        'HANA_HOST=',
        'export X="unterminated',
        '#',
        '=',
        '\0',
      ),
      { maxLength: 6 },
    )
    .map((l) => l.join('\n')),
  fc.string({ unit: 'binary', maxLength: 300 }),
  fc.integer({ min: 500, max: 20_000 }).map((d) => `${'['.repeat(d)}${']'.repeat(d)}`),
);

describe('fuzzed tool arguments through the real shim, and fuzzed project files', () => {
  const home = new TestHome();
  const scan = new SecretScan(SECRET);
  const data = mkdtempSync(join(tmpdir(), 'hanactl-fuzz-shim-'));
  const project = realpathSync(mkdtempSync(join(tmpdir(), 'hanactl-fuzz-project-')));
  let shim: ShimHandle;
  let tools: { name: string; properties: string[] }[] = [];
  let pid: number;
  const outcomes = { calls: 0, results: 0, isError: 0, protocolErrors: 0, detects: 0 };

  beforeAll(async () => {
    scan.addHome(home.dir);
    pid = await startLiteDaemon(home, data);
    await home.ok(['add', '--no-test', 'pw', 'postgres://u@127.0.0.1:1/db', '--password-stdin'], { input: SECRET });
    await home.ok(['trust', project]);
    shim = await startShim(home.env, ['--connection', 'lite', '--project', project], 'fuzz-client');
    tools = (await shim.client.listTools()).tools.map((t) => ({ name: t.name, properties: Object.keys(t.inputSchema.properties ?? {}) }));
  });

  afterAll(async () => {
    await shim?.close();
    await disposeHome(home, data, project);
  });

  it(
    'every tool answers any arguments with a result or an invalid-params error, never a crash',
    async () => {
      const call = fc.constantFrom(...tools).chain((t) => fc.tuple(fc.constant(t.name), argsFor(t.properties)));
      await fc.assert(
        fc.asyncProperty(call, async ([name, args]) => {
          outcomes.calls++;
          try {
            const result = await shim.client.callTool({ name, arguments: args }, undefined, { timeout: 20_000 });
            outcomes.results++;
            if (result.isError) outcomes.isError++;
            const text = textOf(result as Parameters<typeof textOf>[0]);
            scan.add(`tool ${name}`, text);
            scan.add(`tool ${name} structured`, result.structuredContent ?? null);
            expect(text).not.toMatch(/^INTERNAL:/);
          } catch (err) {
            // The SDK refuses arguments that do not match the schema with a JSON-RPC error: fine.
            outcomes.protocolErrors++;
            expect(err).toBeInstanceOf(McpError);
            expect((err as McpError).code).toBe(-32602);
            scan.add(`tool ${name} error`, (err as Error).message);
          }
        }),
        fuzzParams(),
      );
      // The shim still works after all that.
      const after = await shim.call('run_query', { sql: 'SELECT count(*) AS n FROM t', connection: 'lite' });
      expect(after.structuredContent).toMatchObject({ rows: [{ n: 2 }] });
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it(
    'detect_project reads arbitrary JSON and .env content in a trusted folder without failing the daemon',
    async () => {
      const api = apiClient(home, 'hanactl-shim');
      try {
        await fc.assert(
          fc.asyncProperty(fc.dictionary(fc.constantFrom(...PROJECT_FILES), fileContent, { minKeys: 1, maxKeys: 4 }), async (files) => {
            const dir = join(project, `case-${outcomes.detects++}`);
            mkdirSync(dir);
            for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
            // Both ways in: the daemon API and the shim's tool.
            const detected = await api.request('POST', '/v1/projects/detect', { path: dir });
            scan.add('detect', detected);
            const viaTool = await shim.call('detect_project', { path: dir });
            scan.add('detect_project', textOf(viaTool));
            expect(textOf(viaTool)).not.toMatch(/^INTERNAL:/);
            rmSync(dir, { recursive: true, force: true });
          }),
          fuzzParams(),
        );
      } finally {
        api.close();
      }
    },
    FUZZ_TEST_TIMEOUT_MS,
  );

  it('kept serving: same daemon, no "unexpected error" in the log, the planted password nowhere', async () => {
    const health = await apiClient(home).health();
    expect(health.pid).toBe(pid);
    scan.add('shim stderr', shim.stderr());
    await home.stop();
    for (const out of home.outputs) scan.add('cli output', out);
    const unexpected = unexpectedErrors(home.dir);
    const { hits, scannedFiles } = scan.hits();
    report('fuzz-shim', {
      ...outcomes,
      runsPerProperty: FUZZ_RUNS,
      tools: tools.length,
      unexpectedErrorLines: unexpected.length,
      daemonCrashed: false,
      secretHits: hits.length,
      scannedFiles,
    });
    expect(unexpected).toEqual([]);
    expect(hits).toEqual([]);
  });
});
