/** Small statistics for interleaved benchmark rounds: medians and spread, never a single sample. */

/** The value at quantile `q` (0..1) of `values`, linearly interpolated. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const low = Math.floor(position);
  const high = Math.ceil(position);
  const lowValue = sorted[low] as number;
  return lowValue + ((sorted[high] as number) - lowValue) * (position - low);
}

/** The median of `values`. */
export const median = (values: readonly number[]): number => quantile(values, 0.5);

/**
 * Each round's figure over the baseline's figure in that same round (they ran back to back, so drift
 * on the machine cancels). A round without a baseline is NaN.
 */
export const roundRatios = (rounds: readonly number[], baseline: readonly number[]): number[] =>
  rounds.map((value, round) => value / (baseline[round] ?? Number.NaN));

/** The median of the rounds' ratios to the baseline (`roundRatios`). */
export const medianRoundRatio = (rounds: readonly number[], baseline: readonly number[]): number => median(roundRatios(rounds, baseline));

/** Spread as ±half the inter-quartile range, in percent of the median ("±3%"). */
export function spreadPercent(values: readonly number[]): number {
  const mid = median(values);
  return mid === 0 ? 0 : ((quantile(values, 0.75) - quantile(values, 0.25)) / 2 / mid) * 100;
}

/** `n` with thousands separators and `digits` decimals. */
export function formatNumber(n: number, digits = 0): string {
  return n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

/** A ratio such as `1.07×`. */
export const formatRatio = (ratio: number): string => `${ratio.toFixed(2)}×`;
/** For target lines: enough digits that a value just under its target never prints as the target. */
export const formatMeasuredRatio = (ratio: number): string => `${ratio.toFixed(3)}×`;

/**
 * The "measured" part of a target line: the ratio, and when it missed `min` and the machine's CPU per
 * request gives a ceiling (the baseline's CPU per request over this contender's), that ceiling too, so
 * the line says whether this machine could have met the target at all.
 */
export function formatMeasuredWithCeiling(ratio: number, min: number, ceiling: number | undefined): string {
  const measured = formatMeasuredRatio(ratio);
  return ratio < min && ceiling !== undefined
    ? `${measured}; this machine's ceiling for it by CPU: ${formatMeasuredRatio(ceiling)}`
    : measured;
}

/** A markdown table from a header row and rows of cells. */
export function markdownTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}
