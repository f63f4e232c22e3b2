// Baseline for the shim's cold start: a bare MCP SDK stdio server with one tool.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

const server = new McpServer({ name: 'bare', version: '1.0.0' });
server.registerTool('echo', { description: 'Echo the text back.', inputSchema: { text: z.string() } }, ({ text }) => ({
  content: [{ type: 'text', text }],
}));
await server.connect(new StdioServerTransport());
