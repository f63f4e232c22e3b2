import { MAX_SERVER_MESSAGE_BYTES, messageTooLarge, unreadableMessage } from '../message-bound.js';

/** A packet's header: its length (3 bytes, little-endian) and its sequence number. */
const HEADER_BYTES = 4;
/** A packet of this length is continued by the next one: a payload of 16 MiB or more is sent in parts. */
const PART_BYTES = 0xffffff;

/** Where a packet over the limit starts in a chunk (as far as this chunk holds it), and its size so far. */
export interface PacketOverLimit {
  readonly at: number;
  readonly bytes: number;
}

/**
 * Follows the MySQL protocol's packet framing across the chunks of a stream, reading only the
 * headers, and adds up the parts of a payload sent in several packets: the first payload that
 * grows over `limit` is reported before its part over the limit is handed on.
 */
export class MysqlPacketFraming {
  readonly #limit: number;
  readonly #header = Buffer.alloc(HEADER_BYTES);
  #headerHave = 0;
  #bodyLeft = 0;
  /** The payload's length so far, over its parts. */
  #payload = 0;

  constructor(limit: number) {
    this.#limit = limit;
  }

  scan(chunk: Uint8Array): PacketOverLimit | undefined {
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
      const length = this.#header.readUIntLE(0, 3);
      this.#payload += length;
      if (this.#payload > this.#limit) return { at: Math.max(0, start), bytes: this.#payload };
      this.#bodyLeft = length;
      if (length < PART_BYTES) this.#payload = 0;
    }
    return undefined;
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
