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
  const keys = new Map<string, KeyModel>();
  const brackets: TimeBracket[] = [];
  let verificationsWithoutKeyId = 0;
  let createsWithoutKeyId = 0;
  const keyOf = (keyId: string): KeyModel => {
    let key = keys.get(keyId);
    if (key === undefined) {
      key = newKey(keyId);
      keys.set(keyId, key);
    }
    return key;
  };
  const touch = (key: KeyModel, t: TimeBracket) => {
    key.points.push(t.sInv);
    if (Number.isFinite(t.sComp)) key.points.push(t.sComp);
  };

  for (const event of events) {
    const t = timeBracket(event, wallSkewMs);
    brackets.push(t);
    const ok = okOutcome(event);
    const unknown = effectUnknown(event);
    const effective = ok !== undefined || unknown;
    const req = event.request;
    switch (event.op) {
      case 'keys.createKey': {
        if (ok === undefined) {
          if (unknown) createsWithoutKeyId++;
          break;
        }
        if (ok.keyId === undefined) {
          createsWithoutKeyId++;
          break;
        }
        const key = keyOf(ok.keyId);
        touch(key, t);
        const remaining = req.credits?.remaining;
        const limited = typeof remaining === 'number';
        key.sets.push(limited ? opSet(event, t, remaining, remaining, 'createKey') : opSet(event, t, INF, INF, 'createKey'));
        key.configs.push({ t, event, refill: limited ? (req.credits?.refill ?? null) : null });
        break;
      }
      case 'keys.updateKey': {
        if (!effective || req.keyId === undefined || req.credits === undefined) break;
        const key = keyOf(req.keyId);
        touch(key, t);
        const credits = req.credits;
        if (credits === null || credits.remaining === null) {
          key.sets.push(opSet(event, t, INF, INF, 'updateKey'));
          key.configs.push({ t, event, refill: null });
          break;
        }
        if (typeof credits.remaining === 'number') key.sets.push(opSet(event, t, credits.remaining, credits.remaining, 'updateKey'));
        if (credits.refill !== undefined) key.configs.push({ t, event, refill: credits.refill });
        break;
      }
      case 'keys.updateCredits': {
        if (!effective || req.keyId === undefined || req.operation === undefined) break;
        const key = keyOf(req.keyId);
        touch(key, t);
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
        break;
      }
      case 'keys.verifyKey': {
        const keyId = req.keyId ?? ok?.keyId;
        if (keyId === undefined) {
          if (effective) verificationsWithoutKeyId++;
          break;
        }
        if (!effective) break;
        const key = keyOf(keyId);
        touch(key, t);
        const cost = req.cost ?? 1;
        if (unknown) {
          if (cost > 0) key.possibleDown.push({ inv: t.inv, comp: t.comp, amount: cost, event });
          break;
        }
        const code = ok?.code;
        if (code === 'VALID' && cost > 0) {
          const amount: Amount = { inv: t.inv, comp: t.comp, amount: cost, event };
          key.sureDown.push(amount);
          key.possibleDown.push(amount);
        }
        if (code === undefined || code === 'NOT_FOUND') break;
        if (code === 'VALID' || code === 'USAGE_EXCEEDED' || ok?.credits !== undefined) {
          key.reads.push({ t, event, kind: 'verify', code, cost, reported: ok?.credits });
        }
        break;
      }
      case 'keys.getKey': {
        if (ok === undefined || req.keyId === undefined || ok.remaining === undefined) break;
        const key = keyOf(req.keyId);
        touch(key, t);
        key.reads.push({ t, event, kind: 'getKey', code: undefined, cost: 0, reported: ok.remaining === null ? INF : ok.remaining });
        break;
      }
      default:
        break;
    }
  }
  return { keys, brackets, verificationsWithoutKeyId, createsWithoutKeyId };
}
