import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { GetPromptResult, ReadResourceResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { SchemaNames } from './schema-resources.js';
import { TABLE_URI_TEMPLATE, tableUri } from './schema-resources.js';
import type { SessionState } from './session-state.js';

const user = (text: string): GetPromptResult['messages'][number] => ({ role: 'user', content: { type: 'text', text } });

/**
 * Two prompts a person can pick in a client that shows them: `explore_database` (how to find
 * one's way with the catalog tools) and `explain_table` (one table's shape, embedded as its
 * resource, and what to find out about it). Schema and table arguments complete from the
 * active connection's catalog.
 */
export function registerSchemaPrompts(
  server: McpServer,
  state: SessionState,
  names: SchemaNames,
  read: (uri: string) => Promise<ReadResourceResult>,
): void {
  server.registerPrompt(
    'explore_database',
    {
      title: 'Explore this database',
      description: 'Find your way around the active connection with the catalog tools before writing SQL.',
      argsSchema: { schema: completable(z.string().optional().describe('Start in this schema.'), (value) => names.schemas(value ?? '')) },
    },
    ({ schema }) => {
      const on = state.active ? `the connection "${state.active}"` : 'a connection (list_connections, then use_connection)';
      const where = schema ? `the schema "${schema}"` : 'the current schema';
      const steps = [
        `Explore ${on} before writing any SQL, starting in ${where}:`,
        `1. list_schemas, to see the schemas and which one is current.`,
        `2. list_tables${schema ? ` {schema: "${schema}"}` : ''}, for its tables and views with their estimated rows.`,
        '3. describe_table on the tables that matter, for columns, primary and foreign keys and indexes; follow the foreign keys to related tables.',
        '4. search_objects {pattern} when you look for a name (a column like "%customer%") across schemas.',
        '5. sample_rows on a table to see real values before filtering on them.',
        `Each table is also the resource ${TABLE_URI_TEMPLATE}. Then summarise what the database holds: the main entities, how they relate, and which tables to query for what. Use run_query only for reads, with a LIMIT.`,
      ];
      return { description: `Explore ${on}`, messages: [user(steps.join('\n'))] };
    },
  );

  server.registerPrompt(
    'explain_table',
    {
      title: 'Explain a table',
      description: 'Attach one table’s columns, keys and row estimate, and ask what it holds and how it relates to the others.',
      argsSchema: {
        table: completable(z.string().describe('Table or view name.'), (value, context) => names.tables(value, context?.arguments?.schema)),
        schema: completable(z.string().optional().describe('Its schema (default the current one).'), (value) => names.schemas(value ?? '')),
      },
    },
    async ({ table, schema }) => {
      if (!state.active)
        return { messages: [user('No connection is active. Call list_connections, then use_connection, then ask again.')] };
      const inSchema = schema ?? (await names.current());
      if (!inSchema) return { messages: [user(`The connection "${state.active}" has no current schema; ask again with a schema.`)] };
      const uri = tableUri(state.active, inSchema, table);
      const { contents } = await read(uri);
      const [content] = contents;
      const text = content && 'text' in content ? content.text : '';
      return {
        description: `Explain ${table}`,
        messages: [
          { role: 'user', content: { type: 'resource', resource: { uri, mimeType: 'text/plain', text } } },
          user(
            `Explain what the table above holds, what its keys mean, and how it relates to other tables (follow its foreign keys with describe_table). Look at a few real rows with sample_rows {table: "${table}"} before saying what the values mean.`,
          ),
        ],
      };
    },
  );
}
