/** Reads each key's sets, credit changes and answers out of a history, for the credits checker. */
import { type HistoryEvent, type TimeBracket, effectUnknown, okOutcome, timeBracket } from '../history/index.js';
import { type KeyModel, INF, newKey, opSet } from './credits-sets.js';
import type { Amount } from './credits-sums.js';

export interface Collected {
  keys: Map<string, KeyModel>;
  brackets: TimeBracket[];
  verificationsWithoutKeyId: number;
  createsWithoutKeyId: number;
}

export function collect(events: Iterable<HistoryEvent>, wallSkewMs: number): Collected {
  const collector = new KeyCollector();
  const brackets: TimeBracket[] = [];
  for (const event of events) {
    const t = timeBracket(event, wallSkewMs);
    brackets.push(t);
    collector.add(event, t);
  }
  const { keys, verificationsWithoutKeyId, createsWithoutKeyId } = collector;
  return { keys, brackets, verificationsWithoutKeyId, createsWithoutKeyId };
}

/** Each key's model, filed operation by operation (an operation whose effect is unknown included). */
class KeyCollector {
  readonly keys = new Map<string, KeyModel>();
  verificationsWithoutKeyId = 0;
  createsWithoutKeyId = 0;

  add(event: HistoryEvent, t: TimeBracket): void {
    const ok = okOutcome(event);
    const unknown = effectUnknown(event);
    switch (event.op) {
      case 'keys.createKey':
        return this.#createKey(event, t, ok, unknown);
      case 'keys.updateKey':
        return this.#updateKey(event, t, ok !== undefined || unknown);
      case 'keys.updateCredits':
        return this.#updateCredits(event, t, ok !== undefined || unknown, unknown);
      case 'keys.verifyKey':
        return this.#verifyKey(event, t, ok, unknown);
      case 'keys.getKey':
        return this.#getKey(event, t, ok);
      default:
        return;
    }
  }

  /** The key's model, created on first sight; `t`'s service instants join its points. */
  #touched(keyId: string, t: TimeBracket): KeyModel {
    let key = this.keys.get(keyId);
    if (key === undefined) {
      key = newKey(keyId);
      this.keys.set(keyId, key);
    }
    key.points.push(t.sInv);
    if (Number.isFinite(t.sComp)) key.points.push(t.sComp);
    return key;
  }

  #createKey(event: HistoryEvent, t: TimeBracket, ok: Ok, unknown: boolean): void {
    if (ok === undefined) {
      if (unknown) this.createsWithoutKeyId++;
      return;
    }
    if (ok.keyId === undefined) {
      this.createsWithoutKeyId++;
      return;
    }
    const req = event.request;
    const key = this.#touched(ok.keyId, t);
    const remaining = req.credits?.remaining;
    const limited = typeof remaining === 'number';
    key.sets.push(limited ? opSet(event, t, remaining, remaining, 'createKey') : opSet(event, t, INF, INF, 'createKey'));
    key.configs.push({ t, event, refill: limited ? (req.credits?.refill ?? null) : null });
  }

  #updateKey(event: HistoryEvent, t: TimeBracket, effective: boolean): void {
    const req = event.request;
    if (!effective || req.keyId === undefined || req.credits === undefined) return;
    const key = this.#touched(req.keyId, t);
    const credits = req.credits;
    if (credits === null || credits.remaining === null) {
      key.sets.push(opSet(event, t, INF, INF, 'updateKey'));
      key.configs.push({ t, event, refill: null });
      return;
    }
    if (typeof credits.remaining === 'number') key.sets.push(opSet(event, t, credits.remaining, credits.remaining, 'updateKey'));
    if (credits.refill !== undefined) key.configs.push({ t, event, refill: credits.refill });
  }

  #updateCredits(event: HistoryEvent, t: TimeBracket, effective: boolean, unknown: boolean): void {
    const req = event.request;
    if (!effective || req.keyId === undefined || req.operation === undefined) return;
    const key = this.#touched(req.keyId, t);
    if (req.operation === 'set') {
      if (req.value === null || req.value === undefined) {
        key.sets.push(opSet(event, t, INF, INF, 'updateCredits set'));
        key.configs.push({ t, event, refill: null });
      } else {
        key.sets.push(opSet(event, t, req.value, req.value, 'updateCredits set'));
      }
    } else if (typeof req.value === 'number' && req.value > 0) {
      const amount: Amount = { inv: t.inv, comp: t.comp, amount: req.value, event };
      if (req.operation === 'increment') {
        key.possibleUp.push(amount);
        if (!unknown) key.sureUp.push(amount);
      } else {
        // A decrement stops at 0, so it takes away at most its value: a possible spend only.
        key.possibleDown.push(amount);
      }
    }
  }

  #verifyKey(event: HistoryEvent, t: TimeBracket, ok: Ok, unknown: boolean): void {
    const req = event.request;
    const effective = ok !== undefined || unknown;
    const keyId = req.keyId ?? ok?.keyId;
    if (keyId === undefined) {
      if (effective) this.verificationsWithoutKeyId++;
      return;
    }
    if (!effective) return;
    const key = this.#touched(keyId, t);
    const cost = req.cost ?? 1;
    if (unknown) {
      if (cost > 0) key.possibleDown.push({ inv: t.inv, comp: t.comp, amount: cost, event });
      return;
    }
    const code = ok?.code;
    if (code === 'VALID' && cost > 0) {
      const amount: Amount = { inv: t.inv, comp: t.comp, amount: cost, event };
      key.sureDown.push(amount);
      key.possibleDown.push(amount);
    }
    if (code === undefined || code === 'NOT_FOUND') return;
    if (code === 'VALID' || code === 'USAGE_EXCEEDED' || ok?.credits !== undefined) {
      key.reads.push({ t, event, kind: 'verify', code, cost, reported: ok?.credits });
    }
  }

  #getKey(event: HistoryEvent, t: TimeBracket, ok: Ok): void {
    const req = event.request;
    if (ok === undefined || req.keyId === undefined || ok.remaining === undefined) return;
    const key = this.#touched(req.keyId, t);
    key.reads.push({ t, event, kind: 'getKey', code: undefined, cost: 0, reported: ok.remaining === null ? INF : ok.remaining });
  }
}

/** A history operation's answer when it succeeded. */
type Ok = ReturnType<typeof okOutcome>;
