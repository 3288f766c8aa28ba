/**
 * A run's progress on stderr: one line rewritten in place on a terminal, a new line every 5 s
 * otherwise (a CI log is not flooded).
 */
import type { ProgressSnapshot } from '../load/run/index.js';

export function progressPrinter(quiet: boolean, scenario: string): (p: ProgressSnapshot) => void {
  if (quiet) return () => undefined;
  const tty = process.stderr.isTTY === true;
  let lastPlain = 0;
  return (p) => {
    const text = `${scenario} [${p.phase}] ${(p.elapsedMs / 1000).toFixed(0)}/${(p.totalMs / 1000).toFixed(0)} s  ${p.rps.toFixed(0)} req/s  p99 ${p.p99Ms.toFixed(1)} ms  ${p.errors} errors`;
    if (tty) {
      process.stderr.write(`\r\x1b[2K${text}`);
    } else if (p.elapsedMs - lastPlain >= 5_000) {
      lastPlain = p.elapsedMs;
      process.stderr.write(`${text}\n`);
    }
  };
}
