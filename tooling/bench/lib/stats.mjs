// Small statistics helpers: every figure the bench prints is a median (and p90) of raw samples.

/** Quantile by linear interpolation between closest ranks (q in [0, 1]). */
export function quantile(samples, q) {
  if (samples.length === 0) return null;
  const sorted = [...samples].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const lower = Math.floor(position);
  const upper = Math.ceil(position);
  return sorted[lower] + (sorted[upper] - sorted[lower]) * (position - lower);
}

/** Median, quartiles, range and bootstrap 95 % interval of the median of a list of per-round values. */
export function spread(values) {
  return {
    ci: bootstrapMedianCI(values),
    median: quantile(values, 0.5),
    p25: quantile(values, 0.25),
    p75: quantile(values, 0.75),
    min: Math.min(...values),
    max: Math.max(...values),
    perRound: values.map((value) => Number(value.toFixed(4))),
  };
}

/** Summary of a list of samples (same unit as the samples). */
export function summarize(samples) {
  if (samples.length === 0) return { n: 0, median: null, p90: null, min: null, max: null, mean: null };
  const sum = samples.reduce((total, value) => total + value, 0);
  return {
    n: samples.length,
    median: quantile(samples, 0.5),
    p90: quantile(samples, 0.9),
    min: Math.min(...samples),
    max: Math.max(...samples),
    mean: sum / samples.length,
  };
}

/** Formats a duration given in milliseconds with a unit that keeps 3 significant digits. */
export function formatMs(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return '—';
  if (ms < 1) return `${(ms * 1000).toPrecision(3)} µs`;
  if (ms < 1000) return `${ms.toPrecision(3)} ms`;
  return `${(ms / 1000).toPrecision(3)} s`;
}

/** Formats a byte count in MiB. */
export function formatMiB(bytes) {
  if (bytes === null || bytes === undefined) return '—';
  return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
}

/** Formats a ratio a/b as "1.23×". */
export function ratio(a, b) {
  if (a === null || b === null || a === undefined || b === undefined || b === 0) return null;
  return a / b;
}

export function formatRatio(value) {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value >= 100 ? `${value.toFixed(0)}×` : value >= 10 ? `${value.toFixed(1)}×` : `${value.toFixed(2)}×`;
}

/** A small deterministic PRNG (mulberry32), so a bootstrap over the same rounds always gives the same interval. */
export function prng(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Percentile bootstrap interval of the median of `values` (per-round ratios): the rounds are resampled with
 * replacement `resamples` times. Null with fewer than 3 finite values (no spread to learn from).
 */
export function bootstrapMedianCI(values, { level = 0.95, resamples = 2000, seed = 1 } = {}) {
  const finite = values.filter((value) => Number.isFinite(value));
  if (finite.length < 3) return null;
  const random = prng(seed);
  const medians = new Array(resamples);
  const draw = new Array(finite.length);
  for (let index = 0; index < resamples; index += 1) {
    for (let pick = 0; pick < finite.length; pick += 1) draw[pick] = finite[Math.floor(random() * finite.length)];
    medians[index] = quantile(draw, 0.5);
  }
  const tail = (1 - level) / 2;
  // aboveOne: the share of resampled medians over 1, the bootstrap's confidence that the ratio is over 1×.
  const aboveOne = medians.filter((value) => value > 1).length / resamples;
  return { lo: quantile(medians, tail), hi: quantile(medians, 1 - tail), level, rounds: finite.length, aboveOne };
}
