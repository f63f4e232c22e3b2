import type { Socket } from 'node:net';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { isHanactlError } from '../../shared/errors.js';
import type { Broker } from '../../shim/broker.js';
import { withLeanToolList } from '../../shim/lean-tool-list.js';
import type { ShimOptions } from '../../shim/session-state.js';
import { DEFAULT_POOL_OPTIONS } from '../pools/pool.js';
import { helloOptions, MAX_HELLO_BYTES, parseHello } from './hello.js';
import { gatedBroker } from './limited-broker.js';
import { type BrokerServices, ServiceBroker } from './service-broker.js';
import { defaultMaxCallsPerSession, sessionGate } from './session-calls.js';
import type { SessionStore } from './session-store.js';
import { SocketTransport } from './socket-transport.js';

/** One session's MCP server, as the tools' factory builds it (shim/server.ts). */
export interface SessionServer {
  readonly server: McpServer;
  readonly state: { announce(): Promise<void> };
}

export interface RelaySessionsDeps {
  readonly services: BrokerServices;
  readonly createServer: (broker: Broker, options: ShimOptions) => SessionServer | Promise<SessionServer>;
  readonly store: SessionStore;
  /** Runs when a relay connects; throws to refuse it (the run folder and socket checks). */
  readonly guard?: () => void;
  /** How often a live session is re-announced, so `hanactl status` never ages it out (default 60 s). */
  readonly heartbeatMillis?: number;
  /** Database calls one session may have running at once (config.json `perSession.maxConcurrentCalls`; default half the pool). */
  readonly maxCallsPerSession?: number;
  readonly onError?: (err: unknown) => void;
}

interface Live {
  readonly id: string;
  readonly socket: Socket;
  readonly transport: SocketTransport;
}

/** Tells the relay the daemon stops, and which of its requests it still answers: it sends every other one to the next daemon. */
const bye = (running: readonly (string | number)[]) => `${JSON.stringify({ hanactl: 'bye', running })}\n`;
const STOPPING = 'SHUTTING_DOWN: The hanactl daemon is stopping and runs no new call; retry the call in a moment.';

/** A refusal the relay prints to stderr before it exits; never JSON-RPC, so never taken for an answer. */
function refusal(message: string): string {
  return `${JSON.stringify({ hanactl: 'refused', message })}\n`;
}

/**
 * The daemon's MCP sessions over its socket: one per relay connection, opened by the relay's
 * hello line and ended when the connection closes. Each has its own MCP server, tools and
 * session state (chosen connection, project, context values); nothing is shared between them
 * but the daemon's services. A session's choices are saved under its id, so a relay that
 * reconnects after a daemon restart resumes where it was.
 */
export class RelaySessions {
  readonly #deps: RelaySessionsDeps;
  readonly #live = new Set<Live>();
  #stopping = false;

  constructor(deps: RelaySessionsDeps) {
    this.#deps = deps;
  }

  get size(): number {
    return this.#live.size;
  }

  /** Takes a connection whose first bytes (`first`) start a hello line. */
  accept(socket: Socket, first: Buffer): void {
    const parts: Buffer[] = [first];
    let bytes = first.length;
    const read = (chunk?: Buffer) => {
      if (chunk) {
        parts.push(chunk);
        bytes += chunk.length;
      }
      const all = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts);
      const end = all.indexOf(10);
      if (end < 0) {
        if (bytes > MAX_HELLO_BYTES) this.#refuse(socket, `The relay hello is longer than ${MAX_HELLO_BYTES} bytes.`);
        return;
      }
      socket.off('data', read);
      socket.pause();
      void this.#open(socket, all.subarray(0, end).toString('utf8'), all.subarray(end + 1));
    };
    socket.on('data', read);
    socket.once('end', () => socket.destroy()); // gone before its hello ended
    read();
  }

  /** Ends every session: each once its calls in flight are answered, or after `drainMs`. */
  async closeAll(drainMs: number): Promise<void> {
    this.#stopping = true;
    await Promise.all(
      [...this.#live].map(async (live) => {
        // A request that crossed the bye on the wire is not run by a daemon on its way out.
        live.transport.refuseNew(STOPPING);
        // The relay sends its next requests, and those this one has not taken, to the next daemon.
        live.socket.write(bye(live.transport.running()));
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([live.transport.whenIdle(), new Promise<void>((r) => (timer = setTimeout(r, drainMs)))]);
        clearTimeout(timer);
        live.socket.destroySoon();
      }),
    );
  }

  #refuse(socket: Socket, message: string): void {
    socket.end(refusal(message));
  }

  async #open(socket: Socket, line: string, rest: Buffer): Promise<void> {
    if (this.#stopping) {
      this.#refuse(socket, STOPPING);
      return;
    }
    let options: ShimOptions;
    let id: string;
    try {
      this.#deps.guard?.();
      const hello = parseHello(line);
      id = hello.session;
      const saved = this.#deps.store.load(id);
      options = { ...helloOptions(hello), ...(saved ? { resume: saved } : {}) };
      const { store } = this.#deps;
      const broker = new ServiceBroker(this.#deps.services, {
        id,
        pid: hello.pid,
        onReport: (sid, report) =>
          store.save(sid, {
            active: report.connection ?? null,
            pinned: report.pinned ?? false,
            ...(report.project ? { project: report.project } : {}),
          }),
      });
      // One session's calls: at most maxCallsPerSession at once, their checks queued as this session's.
      const gated = gatedBroker(
        broker,
        sessionGate(this.#deps.maxCallsPerSession ?? defaultMaxCallsPerSession(DEFAULT_POOL_OPTIONS.max), `relay:${id}`),
      );
      const { server, state } = await this.#deps.createServer(gated, options);
      const transport = new SocketTransport(socket, rest);
      const live: Live = { id, socket, transport };
      this.#live.add(live);
      const heartbeat = setInterval(() => void state.announce(), this.#deps.heartbeatMillis ?? 60_000);
      heartbeat.unref();
      transport.onclose = () => {
        clearInterval(heartbeat);
        this.#live.delete(live);
        broker.end();
        void server.close().catch(() => {});
        void broker.closeSession(id);
        // A daemon that stops keeps the file: the relay reconnects to the next one and resumes.
        if (!this.#stopping) this.#deps.store.forget(id);
      };
      await server.connect(withLeanToolList(transport));
      socket.resume();
      void state.announce(); // listed from the first byte; the client's name follows on initialize
    } catch (err) {
      if (!isHanactlError(err)) this.#deps.onError?.(err);
      this.#refuse(socket, err instanceof Error ? err.message : String(err));
    }
  }
}
