/**
 * `--watch` expressions: the figures whose "worse" verdict fails a comparison, written as threshold
 * expressions name figures, without the comparison: `p99(keys.verifyKey)`, `p99` (all operations
 * together), `errors(keys.verifyKey)`, `throughput`, `late`. `p99.9` is accepted for `p999`, `rps`
 * for `throughput`. `--noise` takes `5%`, `5 %` or `0.05`.
 */
import { ALL_OPERATIONS, FIGURES, type Figure } from './compare-model.js';

export interface Watch {
  figure: Figure;
  /** An operation name, or `all`. */
  operation: string;
}

const ALIASES: Readonly<Record<string, Figure>> = { 'p99.9': 'p999', rps: 'throughput', rate: 'throughput', error: 'errors' };
const PATTERN = /^\s*([a-z0-9.]+)\s*(?:\(\s*([^()\s]*)\s*\))?\s*$/i;

export type ParsedWatch = { ok: true; watch: Watch } | { ok: false; error: string };

/** Parses one `--watch` expression (the operation is checked against the comparison later, by {@link checkWatches}). */
export function parseWatch(expression: string): ParsedWatch {
  const usage = `Write a figure, optionally of one operation: ${FIGURES.join(', ')}; e.g. "p99(keys.verifyKey)", "errors", "throughput(ratelimit.limit)".`;
  const match = PATTERN.exec(expression);
  if (match === null) return { ok: false, error: `--watch "${expression}" is not understood. ${usage}` };
  const word = (match[1] ?? '').toLowerCase();
  const figure = (FIGURES as readonly string[]).includes(word) ? (word as Figure) : ALIASES[word];
  if (figure === undefined) return { ok: false, error: `--watch "${expression}": unknown figure "${match[1] ?? ''}". ${usage}` };
  const argument = match[2];
  if (argument === '')
    return { ok: false, error: `--watch "${expression}": empty parentheses; name an operation or leave them out (all operations). ${usage}` };
  if (figure === 'late' && argument !== undefined) {
    return { ok: false, error: `--watch "${expression}": late sends are counted for the whole run, not per operation; write "late".` };
  }
  return { ok: true, watch: { figure, operation: argument ?? ALL_OPERATIONS } };
}

/** Refuses watches of operations the comparison does not have, naming those it has. */
export function checkWatches(watches: readonly Watch[], operations: readonly string[]): string | undefined {
  for (const w of watches) {
    if (!operations.includes(w.operation)) {
      const ops = operations.filter((o) => o !== ALL_OPERATIONS);
      return `--watch ${w.figure}(${w.operation}): no operation "${w.operation}" in both runs. The operations compared are: ${ops.join(', ')} (or leave the parentheses out for all operations).`;
    }
  }
  return undefined;
}

/** The default watches: p99 of every operation, and the error share of all operations. */
export function defaultWatches(operations: readonly string[]): Watch[] {
  return [
    ...operations.filter((o) => o !== ALL_OPERATIONS).map((operation) => ({ figure: 'p99' as const, operation })),
    { figure: 'errors', operation: ALL_OPERATIONS },
  ];
}

/** `5%`, `5 %`, `0.05` → 0.05; an error for anything else, or a threshold outside (0, 1). */
export function parseNoise(text: string): { ok: true; noise: number } | { ok: false; error: string } {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(%?)\s*$/.exec(text);
  const value = match === null ? Number.NaN : Number(match[1]) / (match[2] === '%' ? 100 : 1);
  if (!(value > 0 && value < 1)) {
    return { ok: false, error: `--noise "${text}": give the practical threshold as a percentage between 0 and 100, e.g. --noise 5% (or a share, 0.05).` };
  }
  return { ok: true, noise: value };
}
