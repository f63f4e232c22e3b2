/** The context values a shim's environment supplies: every `MCP_CONTEXT_<NAME>` variable. */
export function contextFromEnv(env: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (key.startsWith('MCP_CONTEXT_') && key.length > 'MCP_CONTEXT_'.length && value !== undefined)
      out[key.slice('MCP_CONTEXT_'.length)] = value;
  }
  return out;
}
