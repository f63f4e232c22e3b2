import { randomUUID } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { MAX_LINE_BYTES } from '../daemon/mcp/socket-transport.js';
import { startDaemonInBackground } from '../shared/auto-start.js';
import { contextFromEnv } from '../shared/context-env.js';
import { boundsRefusal, overBounds, topLevelScalars } from '../shared/json-bounds.js';
import { MAX_SQL_LENGTH } from '../shared/limits.js';
import { resolvePaths } from '../shared/paths.js';
import { assertPrivateRunDir } from '../shared/private-run-dir.js';
import { explainSocketError, UNREACHABLE } from '../shared/socket-errors.js';
import { readStopped, stoppedError } from '../shared/stopped-marker.js';

/** `--connection`, `--project`, `--conn-file` (a connection file the daemon reads, within trust). */
export type ShimMainOptions = { readonly connection?: string; readonly project?: string; readonly connFile?: string };

const RESTARTED = 'DAEMON_RESTARTED: The hanactl daemon stopped while handling this call; the call can be retried.';
/** The daemon writes `jsonrpc` and `id` first (daemon/mcp/socket-transport.ts): a response's id is read off its first bytes. */
const RESPONSE = /^\{"jsonrpc":"2\.0","id":(-?[\d.eE+-]+|"(?:[^"\\]|\\.)*"),"(?:result|error)"/;
/** How often a request goes to the next daemon when the one it was written to closed without a word. */
const MAX_RESENDS = 3;
const INITIALIZED = '{"jsonrpc":"2.0","method":"notifications/initialized"}\n';
/** The answer to a request longer than the daemon reads (it would close the connection). */
const tooLong = (bytes: number) =>
  `INVALID_REQUEST: Invalid request: the request is ${(bytes / 1024 / 1024).toFixed(1)} MB, over the ${MAX_LINE_BYTES / 1024 / 1024} MB one call may carry, so it was not sent. run_query takes a statement of at most ${MAX_SQL_LENGTH} characters: send a shorter statement, or load bulk data with the database's own tools.`;

/** Calls `onLine` with each complete line (newline included), however the bytes were chunked. */
function splitLines(onLine: (line: Buffer) => void): (chunk: Buffer) => void {
  let parts: Buffer[] = [];
  return (chunk) => {
    let start = 0;
    for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, end + 1);
      onLine(parts.length > 0 ? Buffer.concat([...parts, piece]) : piece);
      parts = [];
      start = end + 1;
    }
    if (start < chunk.length) parts.push(chunk.subarray(start));
  };
}

/**
 * `hanactl mcp`: the byte relay an editor starts for one agent session. It connects to the
 * daemon's socket (starting the daemon when none answers), sends one hello line, then copies
 * lines both ways; the MCP session lives in the daemon. It reads only the ids of requests in
 * flight (answered "retry" if the daemon goes away) and the client's `initialize`, replayed to a
 * restarted daemon, which resumes the session under the same id. stdout carries JSON-RPC only.
 */
export async function runShim(options: ShimMainOptions): Promise<void> {
  const paths = resolvePaths();
  // hana-cli's HANA_CLI_* target for the daemon to read (shared/hana-cli-env.ts); the password only as "set".
  const hanaCliEnv = Object.fromEntries(
    Object.entries(process.env).flatMap(([k, v]) => (k.startsWith('HANA_CLI_') && v ? [[k, k === 'HANA_CLI_PASSWORD' ? 'set' : v]] : [])),
  );
  const hello = { hanactl: 'relay', v: 1, session: randomUUID(), pid: process.pid, ppid: process.ppid, cwd: process.cwd() };
  const env = { context: contextFromEnv(process.env), vcapServices: process.env.VCAP_SERVICES, hanaCliEnv }; // undefined: left out
  const helloLine = `${JSON.stringify({ ...hello, ...options, ...env })}\n`;
  let sock: Socket | undefined;
  let [linking, draining, ended] = [false, false, false];
  /** Lines not yet written to a daemon, in order; a request's line stays in `pending` until answered. */
  let queue: Buffer[] = [];
  /** Requests in flight by id (as JSON): the method, the line, and the socket it was written to (none while queued). */
  const pending = new Map<string, { method: string; line: Buffer; on?: Socket; resent?: number }>();
  /** Connections a daemon has written to: one closed before a word was a daemon in its last moments. */
  const heard = new WeakSet<Socket>();
  let init: { line: Buffer; id: string; version: unknown } | undefined;
  let swallow: string | undefined;

  const reply = (id: string, body: unknown, key = 'result') =>
    process.stdout.write(`{"jsonrpc":"2.0","id":${id},"${key}":${JSON.stringify(body)}}\n`);
  /** Answers what the daemon cannot: a tool call as an isError result the model can act on; the handshake locally. */
  const answer = (id: string, method: string, message: string) => {
    if (method === 'tools/call') reply(id, { content: [{ type: 'text', text: message }], isError: true });
    else if (method === 'initialize')
      reply(id, {
        protocolVersion: init?.version,
        capabilities: { tools: {}, resources: { listChanged: true }, prompts: { listChanged: true }, completions: {} },
        serverInfo: { name: 'hanactl', version: '0' },
      });
    else if (method === 'ping') reply(id, {});
    else reply(id, { code: -32000, message }, 'error');
  };
  const open = () =>
    new Promise<Socket>((resolve, reject) => {
      assertPrivateRunDir(paths); // never a byte to a socket another user could have swapped in
      const s = connect(paths.socket).once('error', reject);
      s.once('connect', () => resolve(s.off('error', reject).on('error', () => {}))); // 'close' follows an error
    });

  /**
   * The daemon stops: it answers the requests it names as running; every other request written
   * to it was not run (it refuses what reaches it after the bye), so it goes to the next daemon.
   * New lines wait for that daemon. A bye that names nothing (an older daemon) leaves all to it.
   */
  const bye = (from: Socket, line: Buffer) => {
    let running: string[] | undefined;
    try {
      const ids = (JSON.parse(line.toString()) as { running?: unknown }).running;
      if (Array.isArray(ids)) running = ids.map((id) => JSON.stringify(id));
    } catch {} // unreadable: as an older daemon
    if (running) {
      for (const [id, entry] of pending) {
        if (entry.on !== from || running.includes(id)) continue;
        entry.on = undefined; // its refusal from this daemon, if one comes, is not passed on
        queue.push(entry.line);
      }
    }
    draining = true;
    sock = undefined;
  };

  const fromDaemon = (from: Socket) => (line: Buffer) => {
    const head = line.toString('utf8', 0, 256);
    const response = RESPONSE.exec(head);
    if (response) {
      const id = response[1] as string;
      const entry = pending.get(id);
      if (entry && entry.on !== from) return; // a stopping daemon's refusal of a request sent on to the next one
      pending.delete(id);
      if (id === swallow) {
        swallow = undefined; // the replayed handshake's answer: the client has its own
        return void from.write(INITIALIZED);
      }
    } else if (head.startsWith('{"hanactl":"bye"')) {
      return bye(from, line);
    } else if (head.startsWith('{"hanactl":"refused"')) {
      process.stderr.write(`hanactl mcp: ${JSON.parse(line.toString()).message}\n`);
      process.exit(1);
    }
    if (!process.stdout.write(line)) {
      from.pause(); // the editor reads slower than the daemon writes
      process.stdout.once('drain', () => from.resume());
    }
  };

  /**
   * The connection to a daemon closed: what it was running is answered "retry"; what it never ran
   * waits in the queue. A connection closed before the daemon wrote anything (not even the answer
   * to the replayed handshake, which comes first) reached a daemon in its last moments, whose
   * socket still accepted: its requests go to the next daemon, a few times at most, so that a
   * request that itself ends every daemon is answered "retry" in the end.
   */
  const dropped = (from: Socket) => () => {
    if (sock === from) sock = undefined;
    draining = false;
    const silent = !heard.has(from);
    for (const [id, entry] of pending) {
      if (entry.on !== from) continue;
      if (silent && (entry.resent ?? 0) < MAX_RESENDS) {
        entry.on = undefined;
        entry.resent = (entry.resent ?? 0) + 1;
        queue.push(entry.line);
        continue;
      }
      pending.delete(id);
      if (id !== swallow) answer(id, entry.method, RESTARTED);
    }
    swallow = undefined;
    if (queue.length > 0 && !ended) void link();
  };

  const link = async (): Promise<void> => {
    if (linking) return;
    linking = true;
    let s: Socket;
    try {
      s = await open().catch(async (err: NodeJS.ErrnoException) => {
        if (!UNREACHABLE.has(err.code ?? '')) throw err;
        // A daemon a person stopped stays stopped for agents, until a person starts one.
        const stopped = readStopped(paths);
        if (stopped) throw stoppedError(paths, stopped);
        await startDaemonInBackground({ paths, probe: () => open().then((p) => p.destroy()) });
        return open();
      });
    } catch (err) {
      const e = explainSocketError(err, paths.socket) as { code?: string; message?: string };
      for (const [id, entry] of pending) if (!entry.on) answer(id, entry.method, `${e.code ?? 'DAEMON_UNAVAILABLE'}: ${e.message}`);
      for (const [id, entry] of pending) if (!entry.on) pending.delete(id);
      [linking, queue] = [false, []];
      return;
    }
    s.write(helloLine);
    if (init && !queue.includes(init.line)) {
      swallow = init.id; // a new daemon: the handshake again, its answer not passed on
      s.write(init.line);
    }
    for (const line of queue) s.write(line);
    for (const entry of pending.values()) entry.on ??= s;
    [sock, linking, queue] = [s, false, []];
    const lines = splitLines(fromDaemon(s));
    s.on('data', (chunk: Buffer) => {
      heard.add(s);
      lines(chunk);
    }).on('close', dropped(s));
    if (ended) s.end();
  };

  const fromClient = (line: Buffer) => {
    // Over the values or depth a message may hold: answered here, before parsing it (the daemon would refuse it too).
    const over = overBounds(line);
    if (over !== undefined) {
      const { id, method } = topLevelScalars(line, ['id', 'method']);
      if (typeof id !== 'string' && typeof id !== 'number') return;
      if (method === 'tools/call') answer(JSON.stringify(id), 'tools/call', boundsRefusal(over));
      else if (typeof method === 'string') reply(JSON.stringify(id), { code: -32602, message: boundsRefusal(over) }, 'error');
      return;
    }
    let msg: { id?: unknown; method?: unknown; params?: { protocolVersion?: unknown } } | null = null;
    try {
      msg = JSON.parse(line.toString());
    } catch {} // not JSON: the daemon answers it
    const id = msg && typeof msg === 'object' && msg.id !== undefined ? JSON.stringify(msg.id) : undefined;
    if (line.length - 1 > MAX_LINE_BYTES) {
      // Not sent: the daemon closes a connection on such a line, which would read as a restart.
      const text = tooLong(line.length - 1);
      if (msg?.method === 'tools/call' && id !== undefined) answer(id, 'tools/call', text);
      else if (id !== undefined) reply(id, { code: -32600, message: text }, 'error');
      return;
    }
    if (id !== undefined && typeof msg?.method === 'string') {
      pending.set(id, { method: msg.method, line, ...(sock ? { on: sock } : {}) });
      if (msg.method === 'initialize') init = { line, id, version: msg.params?.protocolVersion };
    }
    if (sock) sock.write(line);
    else if (queue.push(line) && !draining) void link();
  };

  process.stdin.on('data', splitLines(fromClient));
  process.stdin.on('end', () => {
    ended = true;
    sock?.end();
  });
  await link();
}
