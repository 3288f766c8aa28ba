/** `--fault KEY=VALUE` flags, parsed and checked the same way by `keysim run` and `keysim serve`. */
import { FAULT_KEYS, type FaultsConfig, OPERATIONS, checkFaultsConfig, parseFaultFlags } from '../http/index.js';

/** The `--fault KEY=VALUE` flags as one checked configuration, or a message naming the valid keys. */
export function faultsFromFlags(flags: readonly string[]): { ok: true; config: FaultsConfig } | { ok: false; message: string } {
  const parsed = parseFaultFlags(flags);
  if (!parsed.ok) return parsed;
  const checked = checkFaultsConfig(parsed.config, '--fault', OPERATIONS);
  if (!checked.ok) {
    const problems = (checked.error.errors ?? [])
      .map((e) => `${e.location.replace(/^--fault\./, '')} ${e.message}${e.fix === undefined ? '' : `. ${e.fix}`}`)
      .join('; ');
    return { ok: false, message: `--fault: ${problems || checked.error.detail} (valid keys: ${FAULT_KEYS.join(', ')}).` };
  }
  return { ok: true, config: checked.value };
}
