import { createConnection } from 'node:net';
import { CLI_CLIENT_NAME, CLIENT_HEADER } from '../../../shared/client-header.js';
import { DaemonClient } from '../../../shared/daemon-client.js';
import { resolvePaths } from '../../../shared/paths.js';
import type { TestHome } from '../../helpers/hanactl-home.js';

/** The socket of a test home. */
export function socketOf(home: TestHome): string {
  return resolvePaths(home.env).socket;
}

/** A real DaemonClient on a test home's socket (no auto-start: the suites start daemons themselves). */
export function apiClient(home: TestHome, clientName: string = CLI_CLIENT_NAME): DaemonClient {
  return new DaemonClient({ socketPath: socketOf(home), clientName });
}

export interface RawResponse {
  readonly status: number;
  readonly body: string;
  /** Milliseconds from the first byte sent to the answer's end. */
  readonly ms: number;
}

export interface RawRequest {
  readonly method: string;
  readonly path: string;
  readonly body?: Buffer | string;
  readonly headers?: Record<string, string | number>;
  /** Sends the client header (default true). */
  readonly clientHeader?: string | false;
  /**
   * Declares this Content-Length but sends only `body`, then waits for the answer: a daemon that
   * enforces its body limit early answers before the rest arrives.
   */
  readonly declaredLength?: number;
  readonly timeoutMs?: number;
}

/** Parses a complete HTTP/1.1 response from `data`, or returns undefined while it is incomplete. */
function parseResponse(data: Buffer): { status: number; body: Buffer } | undefined {
  const end = data.indexOf('\r\n\r\n');
  if (end < 0) return undefined;
  const head = data.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(head[0]?.split(' ')[1]);
  const headers = new Map(
    head.slice(1).map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
  );
  let rest = data.subarray(end + 4);
  const length = headers.get('content-length');
  if (length !== undefined) return rest.length >= Number(length) ? { status, body: rest.subarray(0, Number(length)) } : undefined;
  if (headers.get('transfer-encoding') !== 'chunked') return undefined; // read until close
  const chunks: Buffer[] = [];
  for (;;) {
    const line = rest.indexOf('\r\n');
    if (line < 0) return undefined;
    const size = Number.parseInt(rest.subarray(0, line).toString('latin1'), 16);
    if (size === 0) return { status, body: Buffer.concat(chunks) };
    if (rest.length < line + 2 + size + 2) return undefined;
    chunks.push(rest.subarray(line + 2, line + 2 + size));
    rest = rest.subarray(line + 2 + size + 2);
  }
}

/**
 * One HTTP request written byte for byte on a fresh connection to the Unix socket: invalid
 * UTF-8, no client header, a declared length larger than what is sent. The answer is read from
 * the socket whatever happens to the writing side (a daemon that answers before reading the body
 * and closes makes our writes fail; its answer still counts).
 */
export function rawRequest(socketPath: string, req: RawRequest): Promise<RawResponse> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body, 'utf8');
    // Keep-alive, not `connection: close`: a daemon that answers before reading the body then
    // discards the rest instead of closing under our writes (which would lose its answer).
    const headers: Record<string, string | number> = { host: 'localhost', ...req.headers };
    if (req.clientHeader !== false) headers[CLIENT_HEADER] = req.clientHeader ?? CLI_CLIENT_NAME;
    const chunked = headers['transfer-encoding'] === 'chunked';
    if (body !== undefined || req.declaredLength !== undefined) {
      headers['content-type'] ??= 'application/json';
      if (!chunked) headers['content-length'] = req.declaredLength ?? body?.length ?? 0;
    }
    const head = `${req.method} ${req.path} HTTP/1.1\r\n${Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}`)
      .join('\r\n')}\r\n\r\n`;
    const socket = createConnection(socketPath);
    const received: Buffer[] = [];
    let settled = false;
    const finish = (err?: Error) => {
      if (settled) return;
      const parsed = parseResponse(Buffer.concat(received));
      if (!parsed && !err) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      if (parsed) resolve({ status: parsed.status, body: parsed.body.toString('utf8'), ms: performance.now() - started });
      else reject(err);
    };
    const timer = setTimeout(
      () => finish(new Error(`no answer to ${req.method} ${req.path} within ${req.timeoutMs ?? 10_000} ms`)),
      req.timeoutMs ?? 10_000,
    );
    socket.on('data', (d: Buffer) => {
      received.push(d);
      finish();
    });
    socket.on('end', () => finish(new Error(`the daemon closed the connection without a complete answer to ${req.method} ${req.path}`)));
    socket.on('close', () => finish(new Error(`the connection closed without a complete answer to ${req.method} ${req.path}`)));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // EPIPE/ECONNRESET while writing: the daemon answered early and closed; read what it said.
      if (err.code !== 'EPIPE' && err.code !== 'ECONNRESET') finish(err);
    });
    // The body goes in 64 KiB slices, and stops as soon as an answer arrives: Node destroys a
    // socket whose write fails (EPIPE, the daemon answered early and closed), and with it an
    // answer not yet read.
    const write = async () => {
      if (body !== undefined && body.length <= 65_536 && !chunked) {
        socket.write(Buffer.concat([Buffer.from(head, 'latin1'), body]));
        return;
      }
      socket.write(head);
      if (body === undefined) return;
      if (chunked) socket.write(`${body.length.toString(16)}\r\n`);
      for (let at = 0; at < body.length && received.length === 0 && !socket.destroyed; at += 65_536) {
        if (!socket.write(body.subarray(at, at + 65_536))) {
          await new Promise<void>((r) => {
            const done = () => {
              socket.off('drain', done);
              socket.off('data', done);
              socket.off('close', done);
              r();
            };
            socket.on('drain', done);
            socket.on('data', done);
            socket.on('close', done);
          });
        }
        // A full turn of the event loop, so an early answer is read before the next write.
        await new Promise((r) => setTimeout(r, 2));
      }
      if (chunked && received.length === 0 && !socket.destroyed) socket.write('\r\n0\r\n\r\n');
    };
    void write();
  });
}
