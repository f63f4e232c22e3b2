import type { Engine } from '../../shared/connection-url.js';
import { unscopedConnection } from '../../shared/context-scope.js';
import { HanactlError } from '../../shared/errors.js';
import { ENGINE_TABLE } from '../engines/index.js';

export interface ContextCheck {
  /** The names the connection declares (normalised, upper-case). */
  readonly declared: readonly string[];
  /** Values the caller supplied, keyed by name as given. */
  readonly supplied: Readonly<Record<string, string>>;
  readonly engine: Engine;
  /**
   * Strict: a supplied name the connection does not declare is refused (a URL's query string).
   * Lenient: it is ignored (a shim's environment may hold unrelated MCP_CONTEXT_ variables).
   */
  readonly strict: boolean;
  /** The connection's name, for the refusal of a scoped caller on an unscoped connection. */
  readonly connection?: string;
  /** How the caller sets a missing value, ending the refusal; default: `set MCP_CONTEXT_<NAME> in the MCP client's configuration`. */
  readonly remedy?: (name: string) => string;
}

function refuse(message: string): HanactlError {
  return new HanactlError('CONTEXT_INVALID', message);
}

/**
 * The context values a call places in the database session: exactly one non-empty value per
 * declared name, within the engine's byte limit. A caller that carries values may not use a
 * connection that declares none. Every refusal names the parameter; a refusal means the call
 * does not run.
 */
export function resolveContextValues(check: ContextCheck): Record<string, string> {
  const carried = Object.keys(check.supplied).map((name) => name.trim().toUpperCase());
  if (!check.strict && check.declared.length === 0 && carried.length > 0) {
    // A caller scoped by context values does not step out of its scope by choosing a connection
    // that applies none: its calls there would see every row.
    throw unscopedConnection(carried, check.connection);
  }
  const values: Record<string, string> = {};
  for (const [rawName, value] of Object.entries(check.supplied)) {
    const name = rawName.trim().toUpperCase();
    if (!check.declared.includes(name)) {
      if (check.strict)
        throw refuse(
          `The context parameter ${name} is not declared for this connection; declared: ${check.declared.join(', ') || 'none'}.`,
        );
      continue;
    }
    if (name in values) throw refuse(`The context parameter ${name} is given more than once.`);
    values[name] = value;
  }
  const limit = ENGINE_TABLE[check.engine].contextValueMaxBytes;
  for (const name of check.declared) {
    const value = values[name];
    if (value === undefined) {
      const remedy = check.remedy?.(name) ?? `set MCP_CONTEXT_${name} in the MCP client's configuration`;
      throw refuse(`The context parameter ${name} is declared for this connection but has no value; ${remedy}.`);
    }
    if (value.trim() === '')
      throw refuse(`The context parameter ${name} is empty; an empty value is refused (an engine may store it as NULL).`);
    const bytes = Buffer.byteLength(value, 'utf8');
    if (bytes > limit)
      throw refuse(
        `The context parameter ${name} is ${bytes} bytes long; the limit on this engine is ${limit} bytes (values are refused, never truncated).`,
      );
  }
  return values;
}
