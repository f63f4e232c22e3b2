// A module resolve hook: the conformance suite's `fs` becomes node:fs plus a globSync stand-in.
const FS_WITH_GLOB = new URL('./fs-with-glob.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  const fromSuite = context.parentURL?.includes('/@modelcontextprotocol/conformance/');
  if (fromSuite && (specifier === 'fs' || specifier === 'node:fs')) return { url: FS_WITH_GLOB, shortCircuit: true };
  return next(specifier, context);
}
