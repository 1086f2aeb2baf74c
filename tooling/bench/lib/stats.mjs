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

/** Median, quartiles and range of a list of per-round values. */
export function spread(values) {
  return {
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
