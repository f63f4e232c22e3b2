import { FrameScanner, MAX_SERVER_MESSAGE_BYTES, messageTooLarge, unreadableMessage } from '../message-bound.js';

/** A packet of this length is continued by the next one: a payload of 16 MiB or more is sent in parts. */
const PART_BYTES = 0xffffff;

/**
 * MySQL's framing: a length (3 bytes, little-endian) and a sequence number. The parts of a
 * payload sent in several packets are added up, so the first payload that grows over the limit
 * is reported before its part over the limit is handed on.
 */
export class MysqlPacketFraming extends FrameScanner {
  constructor(limit: number) {
    /** The payload's length so far, over its parts. */
    let payload = 0;
    super(
      {
        headerBytes: 4,
        measure: (header) => {
          const length = header.readUIntLE(0, 3);
          payload += length;
          const size = payload;
          if (length < PART_BYTES) payload = 0;
          return { body: length, size };
        },
      },
      limit,
    );
  }
}

/** The slice of a mysql2 connection the bound replaces: the packet parser its socket feeds (plain or TLS). */
export interface MysqlParserHost {
  packetParser: { execute(chunk: Buffer): void };
  readonly stream?: { destroy(err?: Error): void };
}

/**
 * Bounds every payload the server sends on `raw` to `limit` bytes, before mysql2 assembles it (a
 * row of many wide columns is one payload, and the server's `max_allowed_packet` bounds only each
 * value). mysql2's socket handlers, plain and TLS, feed `raw.packetParser`; this puts the bound
 * in front of it. A payload over the limit ends the connection with messageTooLarge: mysql2
 * fails the command in flight with it, marked fatal, and the connection is given up. Should the
 * parser throw on anything else the server sent, the connection ends the same way instead of the daemon.
 */
export function boundServerPackets(raw: MysqlParserHost, limit = MAX_SERVER_MESSAGE_BYTES): void {
  const parser = raw.packetParser;
  const framing = new MysqlPacketFraming(limit);
  let stopped = false;
  const stop = (err: Error): void => {
    stopped = true;
    raw.stream?.destroy(err);
  };
  raw.packetParser = {
    execute(chunk: Buffer): void {
      if (stopped) return;
      const over = framing.scan(chunk);
      const within = over ? chunk.subarray(0, over.at) : chunk;
      try {
        if (within.length > 0) parser.execute(within);
      } catch (err) {
        stop(unreadableMessage('MySQL/MariaDB', err));
        return;
      }
      if (over) stop(messageTooLarge('MySQL/MariaDB', undefined, limit));
    },
  };
}
