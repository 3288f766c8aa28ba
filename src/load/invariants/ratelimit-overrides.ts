/**
 * Rate-limit overrides as a history shows them: the set and delete operations per namespace and
 * identifier, replayed to tell which limits and durations may have been in force for a request.
 * An exact identifier beats a wildcard; a change concurrent with a request may or may not apply.
 */
import type { HistoryEvent, TimeBracket } from '../history/index.js';

export interface OverrideOp {
  t: TimeBracket;
  event: HistoryEvent;
  /** The override after this operation; null = deleted. */
  state: { limit: number; durationMs: number } | null;
}

function wildcard(pattern: string): RegExp {
  const escaped = pattern.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`, 's');
}

/** The states one override identifier may be in when X takes effect (state null = absent). */
function possibleStates(ops: readonly OverrideOp[], x: TimeBracket): Array<Pick<OverrideOp, 'state'> & { event: HistoryEvent | undefined }> {
  const before = ops.filter((o) => o.t.inv <= x.comp);
  const sure = before.filter((o) => o.t.comp < x.inv);
  const latestSureInv = sure.reduce((m, o) => Math.max(m, o.t.inv), Number.NEGATIVE_INFINITY);
  const states: Array<Pick<OverrideOp, 'state'> & { event: HistoryEvent | undefined }> = before.filter((o) => !(o.t.comp < latestSureInv));
  // Before any change surely took effect, the override may still be in its initial state: absent.
  if (sure.length === 0) states.push({ state: null, event: undefined });
  return states;
}

export class Overrides {
  readonly #byNamespace = new Map<string, Map<string, OverrideOp[]>>();
  readonly #patterns = new Map<string, RegExp>();
  readonly knownIds = new Set<string>();

  add(namespace: string, identifier: string, op: OverrideOp): void {
    let byIdentifier = this.#byNamespace.get(namespace);
    if (byIdentifier === undefined) this.#byNamespace.set(namespace, (byIdentifier = new Map<string, OverrideOp[]>()));
    let ops = byIdentifier.get(identifier);
    if (ops === undefined) byIdentifier.set(identifier, (ops = []));
    ops.push(op);
  }

  /**
   * The possible (limit, duration, source) in force for X: the exact identifier's states; while
   * it may be absent, also the matching wildcards' and the request's own (unless a wildcard is
   * surely present).
   */
  configs(
    namespace: string,
    identifier: string,
    request: { limit: number; durationMs: number },
    x: TimeBracket,
  ): Array<{ limit: number; durationMs: number; source: HistoryEvent | undefined }> {
    const byIdentifier = this.#byNamespace.get(namespace);
    const out: Array<{ limit: number; durationMs: number; source: HistoryEvent | undefined }> = [];
    const push = (c: { limit: number; durationMs: number; source: HistoryEvent | undefined }) => {
      if (!out.some((o) => o.limit === c.limit && o.durationMs === c.durationMs)) out.push(c);
    };
    const exact = byIdentifier?.get(identifier);
    const exactStates = exact === undefined ? [{ state: null, event: undefined }] : possibleStates(exact, x);
    for (const s of exactStates) if (s.state !== null) push({ ...s.state, source: s.event });
    if (exactStates.every((s) => s.state !== null)) return out;
    let wildcardSurelyPresent = false;
    for (const [pattern, ops] of byIdentifier ?? []) {
      if (pattern === identifier || !pattern.includes('*')) continue;
      let regex = this.#patterns.get(pattern);
      if (regex === undefined) this.#patterns.set(pattern, (regex = wildcard(pattern)));
      if (!regex.test(identifier)) continue;
      const states = possibleStates(ops, x);
      if (states.every((s) => s.state !== null)) wildcardSurelyPresent = true;
      for (const s of states) if (s.state !== null) push({ ...s.state, source: s.event });
    }
    if (!wildcardSurelyPresent) push({ ...request, source: undefined });
    return out;
  }
}
