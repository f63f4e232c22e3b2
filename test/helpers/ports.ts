import { createServer } from 'node:net';

/** A loopback port nothing listens on: bound on 0, then closed (a connection to it is refused). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}
