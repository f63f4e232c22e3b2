import type { Socket } from 'node:net';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  JSONRPCErrorResponseSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  JSONRPCNotificationSchema,
  JSONRPCRequestSchema,
  JSONRPCResultResponseSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { boundsRefusal, overBounds, topLevelScalars } from '../../shared/json-bounds.js';

/** A line longer than this (no newline yet) ends the connection: the relay sends SQL of at most 1 MB. */
export const MAX_LINE_BYTES = 8 * 1024 * 1024;

/**
 * A message as one line, `jsonrpc` and `id` first: the relay finds a response's id at the start of
 * the line without parsing results that may be megabytes long (bin/hanactl-mcp, shim/relay.ts).
 */
export function serializeLine(message: JSONRPCMessage): string {
  if (!('id' in message)) return `${JSON.stringify(message)}\n`;
  const { jsonrpc, id, ...rest } = message;
  return `${JSON.stringify({ jsonrpc, id, ...rest })}\n`;
}

/** What is wrong with an object that is no JSON-RPC message, read as the kind it looks most like. */
function whyInvalid(message: object): string {
  const kind =
    'method' in message
      ? 'id' in message
        ? JSONRPCRequestSchema
        : JSONRPCNotificationSchema
      : 'error' in message
        ? JSONRPCErrorResponseSchema
        : JSONRPCResultResponseSchema;
  const issue = kind.safeParse(message).error?.issues[0];
  const where = issue && issue.path.length > 0 ? ` at "${issue.path.join('.')}"` : '';
  return `Invalid Request: not a JSON-RPC 2.0 message${where}: ${issue?.message ?? 'unreadable'}.`;
}

/**
 * MCP over one relay's socket: newline-delimited JSON-RPC, as the stdio transport frames it.
 * A line that is not JSON, or not a JSON-RPC message as the SDK's schema reads one (which the
 * SDK's protocol layer would drop without a word), is answered with JSON-RPC's own error: parse
 * error or invalid request, with the request's id where one can be read and null otherwise.
 * Counts the requests still unanswered, so a stopping daemon can let them finish (`whenIdle`).
 */
export class SocketTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  readonly #socket: Socket;
  #leftover: Buffer | undefined;
  #parts: Buffer[] = [];
  #partBytes = 0;
  readonly #open = new Set<string | number>();
  #idle: (() => void) | undefined;
  #closed = false;
  #refusal: string | undefined;

  constructor(socket: Socket, leftover?: Buffer) {
    this.#socket = socket;
    this.#leftover = leftover && leftover.length > 0 ? leftover : undefined;
  }

  /** Requests received and not yet answered. */
  get pending(): number {
    return this.#open.size;
  }

  async start(): Promise<void> {
    this.#socket.on('data', (chunk: Buffer) => this.#read(chunk));
    this.#socket.on('error', (err) => this.onerror?.(err));
    // The HTTP server's sockets allow half-open connections: a relay that ends its side ends the session.
    this.#socket.on('end', () => this.#socket.end());
    this.#socket.on('close', () => this.#ended());
    const leftover = this.#leftover;
    this.#leftover = undefined;
    if (leftover) this.#read(leftover);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return;
    if (('result' in message || 'error' in message) && 'id' in message) this.#settled(message.id);
    if (!this.#socket.write(serializeLine(message))) {
      await new Promise<void>((resolve) => {
        const done = () => {
          this.#socket.off('drain', done);
          this.#socket.off('close', done);
          resolve();
        };
        this.#socket.on('drain', done);
        this.#socket.on('close', done);
      });
    }
  }

  async close(): Promise<void> {
    this.#socket.end();
    this.#ended();
  }

  /**
   * From now on each new request is answered at once with `message` and never reaches the
   * server: a tool call as an isError result the model can act on, anything else as a JSON-RPC
   * error. Requests received before keep running; notifications (a cancel) still pass.
   */
  refuseNew(message: string): void {
    this.#refusal = message;
  }

  /** The ids of requests received and not yet answered. */
  running(): (string | number)[] {
    return [...this.#open];
  }

  /** Resolves once every request received so far is answered. */
  whenIdle(): Promise<void> {
    if (this.#open.size === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const previous = this.#idle;
      this.#idle = () => {
        previous?.();
        resolve();
      };
    });
  }

  #read(chunk: Buffer): void {
    let start = 0;
    for (let end = chunk.indexOf(10); end >= 0; end = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, end);
      start = end + 1;
      const line = this.#parts.length === 0 ? piece : Buffer.concat([...this.#parts, piece]);
      this.#parts = [];
      this.#partBytes = 0;
      this.#message(line);
    }
    if (start < chunk.length) {
      this.#parts.push(chunk.subarray(start));
      this.#partBytes += chunk.length - start;
      if (this.#partBytes > MAX_LINE_BYTES) {
        this.onerror?.(new Error(`A message is longer than ${MAX_LINE_BYTES} bytes; the connection is closed.`));
        this.#socket.destroy();
      }
    }
  }

  #message(line: Buffer): void {
    if (this.#closed || line.length === 0 || (line.length === 1 && line[0] === 13)) return;
    // Counted on the bytes before anything parses or walks them (shared/json-bounds.ts).
    const over = overBounds(line);
    if (over !== undefined) {
      this.#oversized(line, boundsRefusal(over));
      return;
    }
    let message: unknown;
    try {
      message = JSON.parse(line.toString('utf8'));
    } catch {
      this.#invalid(null, ErrorCode.ParseError, 'Parse error: the line is not JSON; send one JSON-RPC message per line.');
      return;
    }
    if (!message || typeof message !== 'object' || Array.isArray(message)) {
      this.#invalid(
        null,
        ErrorCode.InvalidRequest,
        'Invalid Request: a message must be one JSON-RPC object (batches are not part of MCP).',
      );
      return;
    }
    if (!JSONRPCMessageSchema.safeParse(message).success) {
      const { id } = message as { id?: unknown };
      this.#invalid(typeof id === 'string' || typeof id === 'number' ? id : null, ErrorCode.InvalidRequest, whyInvalid(message));
      return;
    }
    const m = message as { id?: unknown; method?: unknown; params?: { requestId?: unknown } };
    if (typeof m.method === 'string' && (typeof m.id === 'string' || typeof m.id === 'number')) {
      if (this.#refusal !== undefined) {
        this.#refuse(m.id, m.method, this.#refusal);
        return;
      }
      this.#open.add(m.id);
    } else if (m.method === 'notifications/cancelled') {
      // A cancelled request gets no answer (MCP): nobody waits for it, a stopping daemon included.
      this.#settled(m.params?.requestId);
    }
    this.onmessage?.(message as JSONRPCMessage);
  }

  /**
   * A message over the bounds, never parsed: a request is answered (a tool call as an isError
   * result, anything else invalid params), a response to the server's own request reaches it as
   * an error so that nothing waits for it, a notification is only reported.
   */
  #oversized(line: Buffer, text: string): void {
    this.onerror?.(new Error(text));
    const { id, method } = topLevelScalars(line, ['id', 'method']);
    if (typeof id !== 'string' && typeof id !== 'number') return;
    if (typeof method !== 'string') {
      this.onmessage?.({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: text } });
    } else if (this.#refusal !== undefined || method === 'tools/call') {
      this.#refuse(id, method, this.#refusal ?? text);
    } else {
      this.#socket.write(serializeLine({ jsonrpc: '2.0', id, error: { code: ErrorCode.InvalidParams, message: text } }));
    }
  }

  /** Answers a line the protocol layer would drop, and reports it. */
  #invalid(id: string | number | null, code: number, message: string): void {
    this.onerror?.(new Error(message));
    this.#socket.write(`${JSON.stringify({ jsonrpc: '2.0', id, error: { code, message } })}\n`);
  }

  #settled(id: unknown): void {
    if ((typeof id === 'string' || typeof id === 'number') && this.#open.delete(id) && this.#open.size === 0) this.#idle?.();
  }

  #refuse(id: string | number, method: string, text: string): void {
    const answer: JSONRPCMessage =
      method === 'tools/call'
        ? { jsonrpc: '2.0', id, result: { content: [{ type: 'text', text }], isError: true } }
        : { jsonrpc: '2.0', id, error: { code: -32000, message: text } };
    this.#socket.write(serializeLine(answer));
  }

  #ended(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#open.clear();
    this.#idle?.();
    this.onclose?.();
  }
}
