// A TCP relay in front of a PostgreSQL server that counts round trips, for the round-trip bench
// and the test that holds a separated call to one.
import net from 'node:net';

/**
 * Starts a relay to the server of the connection URL `target`. Its `url` is `target` through the
 * relay. A round trip starts when the client speaks after the server has answered (or first on a
 * connection): statements pipelined before any answer are one. `take()` returns the round trips
 * clients started and the bytes they sent (as latin1 text) since the last take; `close()` ends
 * every connection through the relay and the relay itself.
 */
export async function countingRelay(target) {
  const upstreamUrl = new URL(target);
  let roundTrips = 0;
  let sent = '';
  const sockets = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(upstreamUrl.port || 5432), upstreamUrl.hostname);
    sockets.add(client).add(upstream);
    let serverSpoke = true;
    client.on('data', (chunk) => {
      if (serverSpoke) roundTrips++;
      serverSpoke = false;
      sent += chunk.toString('latin1');
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      serverSpoke = true;
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end).on('error', end);
    upstream.on('close', end).on('error', end);
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const url = new URL(target);
  url.port = String(server.address().port);
  return {
    url: url.toString(),
    take() {
      const taken = { roundTrips, sent };
      roundTrips = 0;
      sent = '';
      return taken;
    },
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise((ok) => server.close(() => ok()));
    },
  };
}
