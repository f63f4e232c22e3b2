import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestHome } from '../helpers/hanactl-home.js';
import { bearerForwarder, createToken, readConformanceChecks, runConformance, startHttpDaemon } from '../helpers/mcp-http.js';

const baseline = JSON.parse(readFileSync(join(import.meta.dirname, 'mcp-http-conformance-baseline.json'), 'utf8')) as {
  expectedFailures: Record<string, string>;
};
const expected = Object.keys(baseline.expectedFailures);

/*
 * The official MCP conformance suite against the real daemon's endpoint, authentication on.
 * The suite's server runner connects with a bare StreamableHTTPClientTransport (no way to add a
 * header), so a transparent forwarder in this test adds the bearer token; the daemon itself has
 * no bypass. Host/Origin naming the forwarder are mapped to the daemon's, others pass untouched.
 */
describe('MCP over HTTP passes the official MCP conformance suite (server scenarios)', () => {
  const home = new TestHome();
  const out = mkdtempSync(join(tmpdir(), 'hanactl-conformance-'));
  let forwarder: Awaited<ReturnType<typeof bearerForwarder>>;
  let result: Awaited<ReturnType<typeof runConformance>>;

  beforeAll(async () => {
    const { port } = await startHttpDaemon(home);
    await home.ok(['add', '--no-test', 'conf', 'sqlite::memory:', '--context', 'CUSTOMER_ID']);
    forwarder = await bearerForwarder(port, await createToken(home, 'conformance', 'conf'));
    const yaml = join(out, 'baseline.yml');
    writeFileSync(yaml, `server:\n${expected.map((s) => `  - ${s}`).join('\n')}\n`);
    result = await runConformance(`http://127.0.0.1:${forwarder.port}/mcp/conf?CUSTOMER_ID=1`, {
      expectedFailures: yaml,
      outputDir: join(out, 'results'),
    });
  }, 300_000);

  afterAll(async () => {
    await forwarder?.close();
    await home.dispose();
    rmSync(out, { recursive: true, force: true });
  });

  it('exits 0: every scenario passes except the baseline, and no baseline entry is stale', () => {
    expect(result.code, result.output.slice(-4000)).toBe(0);
  });

  it('passes the protocol scenarios that apply to a server without the suite fixtures', () => {
    const checks = readConformanceChecks(join(out, 'results')).filter((c) => c.status !== 'INFO');
    const failed = (scenario: string) => checks.filter((c) => c.scenario === scenario && c.status === 'FAILURE');
    for (const scenario of [
      'server-initialize',
      'ping',
      'tools-list',
      'resources-list',
      'prompts-list',
      'server-sse-multiple-streams',
      'dns-rebinding-protection',
    ]) {
      expect(
        checks.some((c) => c.scenario === scenario),
        `${scenario} ran`,
      ).toBe(true);
      expect(failed(scenario), scenario).toEqual([]);
    }
    // DNS rebinding: a foreign Host/Origin refused with 4xx, the endpoint's own accepted.
    expect(checks.filter((c) => c.scenario === 'dns-rebinding-protection').map((c) => [c.id, c.status])).toEqual(
      expect.arrayContaining([
        ['localhost-host-rebinding-rejected', 'SUCCESS'],
        ['localhost-host-valid-accepted', 'SUCCESS'],
      ]),
    );
    // Every expected failure is a fixture the server does not have, never a transport fault.
    for (const scenario of expected) expect(failed(scenario).length, scenario).toBeGreaterThan(0);
  });

  it('explains every baseline entry', () => {
    for (const [scenario, why] of Object.entries(baseline.expectedFailures)) expect(why.length, scenario).toBeGreaterThan(40);
  });
});
