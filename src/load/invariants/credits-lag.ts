/**
 * A key's model as regional counters see it (InvariantOptions.regionalLag): the exact checker's
 * lower bounds widened, never its upper ones. A region's counter is created from the database and
 * lives `counterMs`, and a change of the balance drops only the counter of the region that made
 * it: another region may go on refusing from its counter for `counterMs` after a set or a top-up.
 * A VALID answer's debit reaches the database up to `replayMs` later, so it may land after a set
 * answered after it (and lower that set's balance). So, for the lower bounds only, a set (but the
 * key's creation) and a top-up are surely seen `counterMs` after they completed, and a debit may
 * take effect until `replayMs` after its answer.
 */
import { timeBracket } from '../history/index.js';
import type { Amount } from './credits-sums.js';
import type { KeyModel, ServiceToWall, SetEvent } from './credits-sets.js';

/**
 * The wall time by which a change answered at `amount`'s end is surely seen `lagMs` of service
 * time later: the first operation sent past that instant (the sums compare strictly, so that
 * operation itself still counts as possibly before: lenient by one operation, never stricter).
 */
function seenBy(a: { comp: number; event: Amount['event'] }, lagMs: number, map: ServiceToWall, wallSkewMs: number): number {
  if (lagMs <= 0) return a.comp;
  const sComp = timeBracket(a.event, wallSkewMs).sComp;
  return Math.max(a.comp, map.after(sComp + lagMs));
}

export function withRegionalLag(key: KeyModel, map: ServiceToWall, lag: { counterMs: number; replayMs: number }, wallSkewMs: number): KeyModel {
  const sets = key.sets.map((s): SetEvent => {
    if (s.kind !== 'op' || s.event.op === 'keys.createKey') return s;
    const hi = seenBy({ comp: s.hi, event: s.event }, lag.counterMs, map, wallSkewMs);
    return hi === s.hi ? s : { ...s, hi, hiIncl: true };
  });
  const sureUp = key.sureUp.map((a): Amount => ({ ...a, comp: seenBy(a, lag.counterMs, map, wallSkewMs) }));
  const possibleDown = key.possibleDown.map((a): Amount => (a.event.op === 'keys.verifyKey' ? { ...a, comp: seenBy(a, lag.replayMs, map, wallSkewMs) } : a));
  return { ...key, sets, sureUp, possibleDown };
}
