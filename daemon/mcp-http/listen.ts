import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createAdaptorServer } from '@hono/node-server';
import { HanactlError } from '../../shared/errors.js';
import type { HttpListenAddress } from './listen-address.js';

/** The second listener: a TCP port (on loopback unless TLS is on), serving only the MCP endpoint. */
export interface McpHttpListener {
  /** Stops accepting; open connections (SSE streams) end once `drop()` is called. */
  stopAccepting(): void;
  /** Ends every open connection now. */
  drop(): void;
}

/** Listens on the checked address, with TLS when given; a port in use or refused is a sentence. */
export async function listenMcpHttp(
  fetch: (request: Request) => Response | Promise<Response>,
  address: HttpListenAddress,
  tls?: { readonly cert: string; readonly key: string },
): Promise<McpHttpListener> {
  const server = (
    tls
      ? createAdaptorServer({ fetch, createServer: createHttpsServer, serverOptions: { cert: tls.cert, key: tls.key } })
      : createAdaptorServer({ fetch })
  ) as Server;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) => {
      const why = err.code === 'EADDRINUSE' ? 'the port is in use' : err.code === 'EACCES' ? 'permission denied' : err.message;
      reject(
        new HanactlError(
          'INVALID_REQUEST',
          `MCP over HTTP cannot listen on ${address.url}: ${why}. Choose another port with --http 127.0.0.1:PORT.`,
        ),
      );
    });
    server.listen(address.port, address.host, () => resolve());
  });
  return {
    stopAccepting: () => {
      server.close();
      server.closeIdleConnections();
    },
    drop: () => server.closeAllConnections(),
  };
}
