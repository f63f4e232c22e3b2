import type { Context } from 'hono';
import type { z } from 'zod';
import { HanactlError } from '../../shared/errors.js';
import { readBodyText } from './node-request.js';

/** Reads and validates a JSON body; malformed or mistyped input is INVALID_REQUEST naming the field. */
export async function readBody<S extends z.ZodType>(c: Context, schema: S): Promise<z.infer<S>> {
  const text = await readBodyText(c);
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HanactlError('INVALID_REQUEST', 'The request body is not valid JSON.');
  }
  return parseWith(schema, body);
}

/** Validates a value against a schema with an error that names each bad field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems = result.error.issues
    .slice(0, 5)
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
  throw new HanactlError('INVALID_REQUEST', `Invalid request: ${problems}.`);
}
