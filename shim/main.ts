import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { withLeanToolList } from './lean-tool-list.js';
import { startDaemonInBackground } from '../shared/auto-start.js';
import { DaemonClient } from '../shared/daemon-client.js';
import { contextFromEnv } from '../shared/context-env.js';
import { hanaCliFromEnv } from '../shared/hana-cli-env.js';
import { resolvePaths } from '../shared/paths.js';
import { createShimServer } from './server.js';

export interface ShimMainOptions {
  readonly connection?: string;
  readonly project?: string;
  /** A connection file the daemon reads for this session's project (`--conn-file`), within trust. */
  readonly connFile?: string;
}

/**
 * `hanactl mcp`: the stdio MCP server for one agent session. stdout carries JSON-RPC only;
 * diagnostics go to stderr. A missing daemon is started on the first call.
 */
export async function runShim(options: ShimMainOptions): Promise<void> {
  const paths = resolvePaths();
  const daemon: DaemonClient = new DaemonClient({
    socketPath: paths.socket,
    runDir: paths,
    clientName: 'hanactl-shim',
    autoStart: () => startDaemonInBackground({ paths, probe: () => probe.health() }),
  });
  const probe = new DaemonClient({ socketPath: paths.socket, runDir: paths, clientName: 'hanactl-shim' });
  const vcap = process.env.VCAP_SERVICES;
  const hanaCli = hanaCliFromEnv(process.env);
  const { server, state } = createShimServer(daemon, {
    ...options,
    project: options.project ?? process.cwd(),
    context: contextFromEnv(process.env),
    ...(vcap ? { vcapServices: vcap } : {}),
    ...(hanaCli ? { hanaCli } : {}),
  });
  const transport = new StdioServerTransport();
  const heartbeat = setInterval(() => {
    void state.announce();
  }, 60_000);
  heartbeat.unref();
  transport.onclose = () => {
    daemon.close();
    probe.close();
  };
  process.stdin.on('end', () => {
    void server.close();
  });
  await server.connect(withLeanToolList(transport));
}
