import type { Broker } from '../../shim/broker.js';

/** The broker methods that reach a database (or wait for one): the calls the limits count. */
const LIMITED = [
  'query',
  'callCurated',
  'listSchemas',
  'listTables',
  'describeTable',
  'listRoutines',
  'explainQuery',
  'sampleRows',
  'searchObjects',
] as const;

/** Runs one counted call: refuses it (throws) or runs `call` and gives its answer. */
export type CallGate = <T>(call: () => Promise<T>) => Promise<T>;

/**
 * A broker whose database calls each pass `gate` (a per-person or per-session limit); every
 * other method is the broker's own. Methods run on the broker itself, not on the proxy: a class
 * broker keeps its private fields.
 */
export function gatedBroker(broker: Broker, gate: CallGate): Broker {
  const limited: Partial<Record<(typeof LIMITED)[number], unknown>> = {};
  for (const key of LIMITED) {
    const call = broker[key] as (...args: unknown[]) => Promise<unknown>;
    limited[key] = (...args: unknown[]) => gate(() => call.apply(broker, args));
  }
  return new Proxy(broker, {
    get: (target, property) => {
      if (property in limited) return limited[property as keyof typeof limited];
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
