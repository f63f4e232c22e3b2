export { HttpSessions, type McpSession, type SessionBinding } from './http-sessions.js';
export { type HttpListenAddress, isLoopback, resolveListenAddress } from './listen-address.js';
export { HTTP_CLIENT_NAME, type McpHttpOptions, type RunningMcpHttp, startMcpHttp } from './mcp-http.js';
export { createMcpHttpApp, type McpHttpAppDeps } from './mcp-http-app.js';
export { contextFromQuery, parseRawQuery, rawQueryOf } from './query-context.js';
export { bearerToken } from './request-guards.js';
