import { spawn } from 'node:child_process';
import * as fs from 'node:fs';
import http from 'node:http';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { REPO, type TestHome } from './hanactl-home.js';

/** A port free now: bound on 0 and closed (the CLI flag takes no 0). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** Starts the test home's daemon with MCP over HTTP on a free loopback port; its base URL. */
export async function startHttpDaemon(home: TestHome): Promise<{ port: number; base: string }> {
  const port = await freePort();
  await home.ok(['daemon', 'start', '--http', `127.0.0.1:${port}`]);
  return { port, base: `http://127.0.0.1:${port}` };
}

/** Creates a token with the CLI; the token (stdout's only line). */
export async function createToken(home: TestHome, label: string, connection?: string): Promise<string> {
  const { stdout } = await home.ok(['token', 'create', label, ...(connection ? ['--connection', connection] : [])]);
  return stdout.trim();
}

export interface HttpClientHandle {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
  call(name: string, args?: Record<string, unknown>): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** The SDK's real Client over its real StreamableHTTPClientTransport, with a bearer token. */
export async function connectHttp(url: string, token: string | undefined, clientName = 'http-test-client'): Promise<HttpClientHandle> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
  });
  const client = new Client({ name: clientName, version: '2.0.0' });
  await client.connect(transport);
  return {
    client,
    transport,
    call: async (name, args = {}) => (await client.callTool({ name, arguments: args })) as CallToolResult,
    close: async () => {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** A raw request to the endpoint (to set Host, Origin or nothing at all). */
export function rawRequest(
  port: number,
  path: string,
  headers: Record<string, string>,
  body = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  }),
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers },
      },
      (res) => {
        let text = '';
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * A transparent forwarder that adds `Authorization: Bearer <token>`: the conformance suite's
 * server runner connects with a bare StreamableHTTPClientTransport and cannot send a header. The
 * Host and Origin that name the forwarder are rewritten to name the daemon; any other value is
 * passed through untouched, so the suite's DNS-rebinding checks reach the daemon's own guard.
 */
export async function bearerForwarder(targetPort: number, token: string): Promise<{ port: number; close(): Promise<void> }> {
  const port = await freePort();
  const local = [`127.0.0.1:${port}`, `localhost:${port}`];
  const retarget = (value: string | undefined) => {
    if (value === undefined) return undefined;
    for (const l of local) if (value === l || value === `http://${l}`) return value.replace(`:${port}`, `:${targetPort}`);
    return value;
  };
  const server = http.createServer((req, res) => {
    const headers = { ...req.headers, authorization: `Bearer ${token}`, host: retarget(req.headers.host) };
    if (req.headers.origin !== undefined) headers.origin = retarget(req.headers.origin);
    const upstream = http.request({ host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

const SUITE = join(REPO, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');

/**
 * Runs the official MCP conformance suite's server scenarios against `url`
 * (`conformance server --url URL [--expected-failures FILE] -o DIR`). On Node 20 a resolve hook
 * supplies the `fs.globSync` the suite imports but its server runner never calls.
 */
export function runConformance(
  url: string,
  options: { expectedFailures?: string; outputDir: string; timeoutMs?: number },
): Promise<{ code: number | null; output: string }> {
  const hook = 'globSync' in fs ? [] : ['--import', join(REPO, 'test/helpers/conformance/register.mjs')];
  const args = [...hook, SUITE, 'server', '--url', url, '-o', options.outputDir];
  if (options.expectedFailures) args.push('--expected-failures', options.expectedFailures);
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: REPO, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 240_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Every check of a conformance output folder, by scenario folder. */
export function readConformanceChecks(outputDir: string): { scenario: string; id: string; status: string; errorMessage?: string }[] {
  const checks: { scenario: string; id: string; status: string; errorMessage?: string }[] = [];
  for (const folder of fs.readdirSync(outputDir)) {
    const file = join(outputDir, folder, 'checks.json');
    if (!fs.existsSync(file)) continue;
    const scenario = folder.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T.*$/, '');
    for (const c of JSON.parse(fs.readFileSync(file, 'utf8')) as { id: string; status: string; errorMessage?: string }[]) {
      checks.push({ scenario, id: c.id, status: c.status, ...(c.errorMessage ? { errorMessage: c.errorMessage } : {}) });
    }
  }
  return checks;
}
