import { HanactlError } from '../../shared/errors.js';
import type { Broker } from '../../shim/broker.js';
import { gatedBroker } from '../mcp/limited-broker.js';

/** Calls one signed-in person may have running at once, unless config.json says otherwise. */
export const DEFAULT_MAX_CALLS_PER_PERSON = 8;

/** Sessions one signed-in person may hold at once, unless config.json says otherwise. */
export const DEFAULT_MAX_SESSIONS_PER_PERSON = 32;

/** A signed-in person as the limits count them. */
export interface Person {
  readonly subject: string;
  readonly issuer: string;
}

/** Who a person is, for the counts: the subject is unique only within its issuer. */
export function personKey(person: Person): string {
  return `${person.issuer}\n${person.subject}`;
}

/**
 * The tool calls each signed-in person has running, across all their sessions: one person
 * cannot hold every pooled connection. One more than the limit is refused (429), naming it.
 */
export class PersonCalls {
  readonly #running = new Map<string, number>();
  readonly max: number;

  constructor(max: number = DEFAULT_MAX_CALLS_PER_PERSON) {
    this.max = max;
  }

  /** True when the person runs as many calls as the limit allows. */
  full(person: Person): boolean {
    return (this.#running.get(personKey(person)) ?? 0) >= this.max;
  }

  refusal(person: Person): HanactlError {
    return new HanactlError(
      'TOO_MANY_CALLS',
      `You (${person.subject}) already have ${this.max} calls running, the limit per person; wait for one to finish, then retry.`,
    );
  }

  async run<T>(person: Person, call: () => Promise<T>): Promise<T> {
    if (this.full(person)) throw this.refusal(person);
    const key = personKey(person);
    this.#running.set(key, (this.#running.get(key) ?? 0) + 1);
    try {
      return await call();
    } finally {
      const left = (this.#running.get(key) ?? 1) - 1;
      if (left > 0) this.#running.set(key, left);
      else this.#running.delete(key);
    }
  }
}

/** A broker whose database calls count towards the person's limit of running calls. */
export function limitedBroker(broker: Broker, person: Person, calls: PersonCalls): Broker {
  return gatedBroker(broker, (call) => calls.run(person, call));
}
