import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CatalogService } from '../../../daemon/catalog/catalog-service.js';
import { RelaySessions } from '../../../daemon/mcp/relay-sessions.js';
import type { BrokerServices } from '../../../daemon/mcp/service-broker.js';
import { SessionStore } from '../../../daemon/mcp/session-store.js';
import { ProjectFiles } from '../../../daemon/projects/project-files.js';
import { ProjectService } from '../../../daemon/projects/project-service.js';
import { SessionSources } from '../../../daemon/projects/session-sources.js';
import { TrustStore } from '../../../daemon/projects/trust-store.js';
import { CallTracker } from '../../../daemon/queries/call-tracker.js';
import { SessionTable } from '../../../daemon/sessions/session-table.js';
import { HanactlError } from '../../../shared/errors.js';
import { createShimServer } from '../../../shim/server.js';
import { memoryTrust } from '../../unit/daemon/projects/setup.js';

// Sessions that come and go leave nothing behind in the daemon: after N relay sessions opened,
// used and closed, everything the daemon holds per session is back where it started. Counts,
// not memory or time: a per-session leak of any size shows as N more of something.

const unused = (what: string) => () => {
  throw new HanactlError('NOT_FOUND', `${what} is not part of this test.`);
};

describe('relay sessions that come and go', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hanactl-churn-'));
  const socketPath = join(dir, 'daemon.sock');
  const storeDir = join(dir, 'sessions');
  const sources = new SessionSources();
  const table = new SessionTable();
  const trust = new TrustStore(memoryTrust());
  trust.trust(dir);
  const projects = new ProjectService({ trust, files: new ProjectFiles(trust), hanaCliHome: join(dir, 'no-hana-cli'), sessions: sources });
  const services: BrokerServices = {
    connections: { list: () => [], resolve: unused('A registry connection') },
    projects,
    queries: { run: unused('A query') },
    catalog: {} as CatalogService,
    sessions: table,
    calls: new CallTracker(),
  };
  const relays = new RelaySessions({ services, createServer: createShimServer, store: new SessionStore(storeDir) });
  const serverSide = new Set<Socket>();
  let server: Server;

  beforeAll(async () => {
    server = createServer((socket) => {
      serverSide.add(socket);
      socket.once('close', () => serverSide.delete(socket));
      socket.once('data', (first: Buffer) => relays.accept(socket, first));
    });
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
  });

  afterAll(async () => {
    for (const socket of serverSide) socket.destroy();
    await new Promise((resolve) => server.close(resolve));
    rmSync(dir, { recursive: true, force: true });
  });

  /**
   * One session as a relay runs it: hello (with a `VCAP_SERVICES`, which the daemon keeps for the
   * session's project), initialize, then `detect_project`; the client hangs up once answered.
   * Resolves when the daemon's side of the socket has closed.
   */
  function session(): Promise<string> {
    return new Promise((resolve, reject) => {
      let serverSocket: Socket | undefined;
      server.once('connection', (s: Socket) => (serverSocket = s));
      const client = connect(socketPath);
      const hello = { hanactl: 'relay', v: 1, session: randomUUID(), pid: process.pid, cwd: dir, context: {}, vcapServices: '{}' };
      const init = {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'churn', version: '1' } },
      };
      const detect = { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'detect_project', arguments: {} } };
      let buffered = '';
      let answer = '';
      client.on('connect', () => client.write(`${JSON.stringify(hello)}\n${JSON.stringify(init)}\n`));
      client.on('data', (chunk) => {
        buffered += chunk;
        let end = buffered.indexOf('\n');
        while (end >= 0) {
          const message = JSON.parse(buffered.slice(0, end)) as { id?: number };
          buffered = buffered.slice(end + 1);
          if (message.id === 1) client.write(`{"jsonrpc":"2.0","method":"notifications/initialized"}\n${JSON.stringify(detect)}\n`);
          if (message.id === 2) {
            answer = JSON.stringify(message);
            client.end();
          }
          end = buffered.indexOf('\n');
        }
      });
      client.on('error', reject);
      client.on('close', () => {
        if (!serverSocket || serverSocket.closed) resolve(answer);
        else serverSocket.once('close', () => resolve(answer));
      });
    });
  }

  const listeners = () => process.eventNames().reduce((n, name) => n + process.listenerCount(name), 0);
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const held = () => ({
    relaySessions: relays.size,
    listed: table.list().length,
    projectExtras: sources.size,
    savedSessions: existsSync(storeDir) ? readdirSync(storeDir).length : 0,
    daemonSockets: serverSide.size,
  });

  it('holds nothing per session once its relay hangs up', { timeout: 60_000 }, async () => {
    // The first session loads the tools; the baseline is taken after it.
    expect(await session()).toContain(dir);
    expect(held()).toEqual({ relaySessions: 0, listed: 0, projectExtras: 0, savedSessions: 0, daemonSockets: 0 });
    const [listenersBefore, timersBefore] = [listeners(), timers()];

    const n = 25;
    for (let i = 0; i < n; i++) expect(await session()).toContain(dir);

    expect(held()).toEqual({ relaySessions: 0, listed: 0, projectExtras: 0, savedSessions: 0, daemonSockets: 0 });
    // Process-wide listeners and timers (a session's heartbeat is one): none added per session.
    expect(listeners() - listenersBefore).toBeLessThan(n);
    expect(timers() - timersBefore).toBeLessThan(n);
  });
});
