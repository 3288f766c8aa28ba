/**
 * `.hgrm` files: an operation's latency histogram as HdrHistogram's percentile-distribution text,
 * the format HdrHistogram's own tools print (Java `outputPercentileDistribution`, wrk2 `--latency`)
 * and its online plotter reads:
 *
 *        Value     Percentile TotalCount 1/(1-Percentile)
 *
 *        0.412 0.000000000000          1           1.00
 *        …
 *      123.903 1.000000000000      14987
 *   #[Mean    =        1.382, StdDeviation   =        2.114]
 *   #[Max     =      123.903, Total count    =      14987]
 *   #[Buckets =           22, SubBuckets     =         2048]
 *
 * keysim records microseconds; the values are written in milliseconds (output value unit scaling
 * ratio 1000), with 5 percentile ticks per half distance, as the Java default.
 */
import type { OperationStats } from './model.js';
import { decodeHistogram } from './histogram.js';

/** Recorded values are microseconds; `.hgrm` values are milliseconds. */
export const HGRM_SCALING_RATIO = 1000;
/** Percentile ticks per half distance to 100 % (HdrHistogram's default). */
export const HGRM_TICKS_PER_HALF_DISTANCE = 5;

/** One encoded histogram (microseconds, compressed base64) as percentile-distribution text in ms. */
export function renderHgrm(encodedHistogram: string): string {
  return decodeHistogram(encodedHistogram).outputPercentileDistribution(HGRM_TICKS_PER_HALF_DISTANCE, HGRM_SCALING_RATIO);
}

/** A file name for an operation's `.hgrm`: the operation name with anything but letters, digits, `.`, `_` and `-` replaced. */
export function hgrmFileName(operation: string): string {
  return `${operation.replace(/[^A-Za-z0-9_.-]/g, '_')}.hgrm`;
}

/**
 * The `.hgrm` files of a run: one per operation and one for all operations together (`all.hgrm`),
 * of the corrected latency (from the actual send in the closed model, which has no intended send
 * times), and the uncorrected one beside it (`<operation>.uncorrected.hgrm`) in the open model.
 * Operations with no answered request have no file.
 */
export function hgrmFiles(operations: readonly OperationStats[], overall: OperationStats, model: 'open' | 'closed'): Array<{ name: string; text: string }> {
  const files: Array<{ name: string; text: string }> = [];
  for (const op of [overall, ...operations]) {
    const name = op === overall ? 'all' : op.operation;
    if (op.latency.corrected.count === 0 && op.latency.uncorrected.count === 0) continue;
    files.push({ name: hgrmFileName(name), text: renderHgrm(op.histograms.corrected) });
    if (model === 'open') files.push({ name: hgrmFileName(`${name}.uncorrected`), text: renderHgrm(op.histograms.uncorrected) });
  }
  return files;
}
