// Sample statistics for the benchmark. Times are milliseconds.

/** The nearest-rank percentile of an ascending array. */
export function percentile(sorted, p) {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}

/** p50, p99, mean, min, max and the count of a list of samples. */
export function summarise(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  const mean = sorted.reduce((s, v) => s + v, 0) / (sorted.length || 1);
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    mean,
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** The median of a list. */
export function median(values) {
  return percentile(
    [...values].sort((a, b) => a - b),
    50,
  );
}

/** Milliseconds since `start` (a `process.hrtime.bigint()`). */
export function since(start) {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

/** Runs `fn` `n` times in sequence and returns each call's duration. */
export async function timeCalls(n, fn) {
  const samples = new Array(n);
  for (let i = 0; i < n; i++) {
    const t = process.hrtime.bigint();
    await fn();
    samples[i] = since(t);
  }
  return samples;
}

/**
 * Times several contenders fairly on a noisy machine: `rounds` rounds, each contender
 * taking `perRound` calls in turn, so a burst of background load hits them all alike.
 */
export async function interleave(contenders, { rounds, perRound }) {
  const samples = Object.fromEntries(Object.keys(contenders).map((k) => [k, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, fn] of Object.entries(contenders)) samples[name].push(...(await timeCalls(perRound, fn)));
  }
  return Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, summarise(v)]));
}
