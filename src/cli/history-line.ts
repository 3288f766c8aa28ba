import { existsSync } from 'node:fs';

/**
 * The `history:` line after a run's summary: only for a history file that is there (a run may end
 * without one: nothing recorded when the run stopped before its load, or the file was removed).
 */
export function historyLineOf(path: string | undefined): string {
  return path === undefined || !existsSync(path) ? '' : `history: ${path} (keysim check re-checks it)\n`;
}
