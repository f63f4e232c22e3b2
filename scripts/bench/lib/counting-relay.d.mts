export interface CountingRelay {
  /** The connection URL it was started with, through the relay. */
  readonly url: string;
  /** The round trips clients started, and the text they sent, since the last take(). */
  take(): { roundTrips: number; sent: string };
  /** Ends every connection through the relay, then the relay. */
  close(): Promise<void>;
}

export function countingRelay(target: string): Promise<CountingRelay>;
