import { FrameScanner, MAX_SERVER_MESSAGE_BYTES, messageTooLarge, unreadableMessage } from '../message-bound.js';

/**
 * PostgreSQL's framing: a type byte and a length that counts itself, not the type byte.
 * A scanner of it reports the first message whose length says it is over the limit.
 */
export class PgMessageFraming extends FrameScanner {
  constructor(limit: number) {
    super(
      {
        headerBytes: 5,
        measure: (header) => {
          const length = header.readUInt32BE(1);
          return { body: Math.max(0, length - 4), size: 1 + length };
        },
      },
      limit,
    );
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
