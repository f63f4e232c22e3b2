import { createServer, type Server, type Socket } from 'node:net';

/**
 * A TCP listener on 127.0.0.1 that accepts every connection and never says a word: a database
 * whose host froze after the handshake's SYN/ACK. Counts the sockets it holds, so a test can see
 * whether a client gave up on its side (closed) or left them open.
 */
export class HungPeer {
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  accepted = 0;

  private constructor(server: Server) {
    this.#server = server;
    server.on('connection', (socket) => {
      this.accepted++;
      this.#sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => this.#sockets.delete(socket));
      socket.on('data', () => {}); // read and ignore whatever the client sends
    });
  }

  static async start(): Promise<HungPeer> {
    const server = createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return new HungPeer(server);
  }

  get port(): number {
    return (this.#server.address() as { port: number }).port;
  }

  /** Sockets the clients still hold open. */
  get open(): number {
    return this.#sockets.size;
  }

  async close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((r) => this.#server.close(() => r()));
  }
}
