import { MAX_SERVER_MESSAGE_BYTES, messageTooLarge, unreadableMessage } from '../message-bound.js';

/** A message's header: its type byte and its length (which counts itself, not the type byte). */
const HEADER_BYTES = 5;

/** Where a message over the limit starts in a chunk, and its size. */
export interface OverLimit {
  readonly at: number;
  readonly bytes: number;
}

/**
 * Follows the PostgreSQL protocol's message framing across the chunks of a stream, reading only
 * the headers: the first message whose length says it is over `limit` is reported before any of
 * it is handed on.
 */
export class PgMessageFraming {
  readonly #limit: number;
  readonly #header = Buffer.alloc(HEADER_BYTES);
  #headerHave = 0;
  #bodyLeft = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  /** Reads `chunk`'s headers; the first message over the limit, or undefined when every message is within it. */
  scan(chunk: Uint8Array): OverLimit | undefined {
    let i = 0;
    while (i < chunk.length) {
      if (this.#bodyLeft > 0) {
        const n = Math.min(this.#bodyLeft, chunk.length - i);
        this.#bodyLeft -= n;
        i += n;
        continue;
      }
      const start = i - this.#headerHave;
      const n = Math.min(HEADER_BYTES - this.#headerHave, chunk.length - i);
      this.#header.set(chunk.subarray(i, i + n), this.#headerHave);
      this.#headerHave += n;
      i += n;
      if (this.#headerHave < HEADER_BYTES) break;
      this.#headerHave = 0;
      const length = this.#header.readUInt32BE(1);
      if (1 + length > this.#limit) return { at: Math.max(0, start), bytes: 1 + length };
      this.#bodyLeft = Math.max(0, length - 4);
    }
    return undefined;
  }
}

type DataListener = (chunk: Buffer) => void;

/** The part of a Node stream the bound uses. */
interface WireStream {
  listeners(event: 'data'): unknown[];
  on(event: 'data', listener: DataListener): unknown;
  removeListener(event: 'data', listener: DataListener): unknown;
  destroy(err?: Error): unknown;
}

/** pg's wire connection: `attachListeners` hooks its protocol parser to the socket, or to the TLS socket over it. */
export interface PgWireConnection {
  attachListeners(stream: WireStream): void;
}

/**
 * Bounds every message the server sends on `connection` to `limit` bytes, before pg's parser
 * assembles or decodes it (pg-protocol decodes a whole DataRow in the socket's `data` handler,
 * where a value over V8's string limit throws out of the event loop). The parser gets the
 * stream's data through this bound, on the socket or, with TLS, on the TLS socket: a message
 * over the limit ends the connection with messageTooLarge, which fails the call in flight and
 * marks the connection broken. Should the parser throw on anything else the server sent, the
 * connection ends the same way instead of the daemon.
 */
export function boundServerMessages(connection: PgWireConnection, limit = MAX_SERVER_MESSAGE_BYTES): void {
  const attach = connection.attachListeners.bind(connection);
  connection.attachListeners = (stream: WireStream): void => {
    const before = new Set(stream.listeners('data'));
    attach(stream);
    const feeds = stream.listeners('data').filter((l) => !before.has(l)) as DataListener[];
    for (const feed of feeds) stream.removeListener('data', feed);
    const framing = new PgMessageFraming(limit);
    let stopped = false;
    stream.on('data', (chunk: Buffer) => {
      if (stopped) return;
      const over = framing.scan(chunk);
      const within = over ? chunk.subarray(0, over.at) : chunk;
      try {
        if (within.length > 0) for (const feed of feeds) feed.call(stream, within);
      } catch (err) {
        stopped = true;
        stream.destroy(unreadableMessage('PostgreSQL', err));
        return;
      }
      if (over) {
        stopped = true;
        stream.destroy(messageTooLarge('PostgreSQL', over.bytes, limit));
      }
    });
  };
}
