// node:fs, and a globSync that says why it is missing (Node 20 has none; the server runner never calls it).
import fs from 'node:fs';

export * from 'node:fs';
export default fs;
export function globSync() {
  throw new Error('fs.globSync needs Node 22; hanactl runs the conformance suite on Node 20 for its server scenarios only.');
}
