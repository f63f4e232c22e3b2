import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/**
 * One socket, two protocols, told apart by the first byte: a relay's hello line is JSON (`{`),
 * an HTTP request starts with its method's capital letter. One path to create 0700/0600, to
 * check at start and to find: the CLI, the relays and the auto-starter all connect to it.
 * The HTTP server keeps listening itself (its keep-alive and close handling stay its own); its
 * connection handler now sees only the connections that speak HTTP.
 *
 * Until its first byte a connection is nobody's: the HTTP server accepts half-open sockets, so
 * a peer that connects and hangs up without a byte (the auto-starter's "is it up?" probe) would
 * otherwise stay open on this side forever and keep `server.close()` from ever finishing. Such
 * a connection is closed here, and `destroyUndecided()` ends any still waiting when the daemon stops.
 */
export function dispatchConnections(http: Server, relays: { accept(socket: Socket, first: Buffer): void }): { destroyUndecided(): void } {
  const [serveHttp] = http.listeners('connection') as ((socket: Socket) => void)[];
  if (!serveHttp) throw new Error('The HTTP server has no connection handler to dispatch to.');
  const undecided = new Set<Socket>();
  http.removeAllListeners('connection');
  http.on('connection', (socket: Socket) => {
    undecided.add(socket);
    const gone = () => {
      undecided.delete(socket);
      socket.destroy();
    };
    socket.once('end', gone);
    socket.once('close', () => undecided.delete(socket));
    socket.once('data', (first: Buffer) => {
      undecided.delete(socket);
      socket.off('end', gone);
      if (first[0] === 0x7b) return relays.accept(socket, first);
      socket.pause();
      socket.unshift(first);
      serveHttp.call(http, socket);
      process.nextTick(() => socket.resume());
    });
    socket.on('error', () => socket.destroy());
  });
  return {
    destroyUndecided: () => {
      for (const socket of undecided) socket.destroy();
      undecided.clear();
    },
  };
}
