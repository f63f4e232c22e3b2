import { HanactlError } from './errors.js';

/**
 * The refusal for a caller scoped by context values that would use a connection declaring none:
 * its calls there would run unscoped and see every row. `carried` are the names the caller
 * carries (upper case); `connection` the connection's name, when known.
 */
export function unscopedConnection(carried: readonly string[], connection?: string): HanactlError {
  const where = connection ? `connection "${connection}"` : 'this connection';
  return new HanactlError(
    'CONTEXT_INVALID',
    `This session carries context values (${carried.join(', ')}) and ${where} declares none, so its calls there would run unscoped. Use a connection that declares them, or give this connection its own MCP server entry without MCP_CONTEXT_ variables.`,
  );
}
