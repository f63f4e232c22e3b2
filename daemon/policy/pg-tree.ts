/**
 * The walk over a libpg-query parse tree (the JSON of PostgreSQL's raw parse nodes) that the
 * readers of one kind of node share: each node is an object whose keys are field or node names,
 * a list is an array.
 */

export type Node = Record<string, unknown>;
export const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null;

/**
 * Calls `visit` with the key and value of every field that holds a node or a list, depth first in
 * key order, through lists. A value deeper than `maxDepth` is not looked into (the root is depth 0;
 * a list and a node are a level each). A visit that returns true ends the walk, which then returns
 * true.
 */
export function walkTree(root: unknown, maxDepth: number, visit: (key: string, child: Node) => boolean): boolean;
export function walkTree(root: unknown, maxDepth: number, visit: (key: string, child: Node) => void): void;
export function walkTree(root: unknown, maxDepth: number, visit: (key: string, child: Node) => unknown): boolean {
  const walk = (value: unknown, depth: number): boolean => {
    if (depth > maxDepth || !isNode(value)) return false;
    if (Array.isArray(value)) return value.some((item) => walk(item, depth + 1));
    for (const key in value) {
      const child = value[key];
      if (isNode(child) && (visit(key, child) === true || walk(child, depth + 1))) return true;
    }
    return false;
  };
  return walk(root, 0);
}
