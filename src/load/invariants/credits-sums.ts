/** Amounts that change a key's balance at an unknown instant of their flight, summed by time prefix. */
import type { HistoryEvent } from '../history/index.js';
import { countLE, countLT } from './sorted.js';

/** An amount that changes the balance at an unknown point of [inv, comp]. */
export interface Amount {
  inv: number;
  comp: number;
  amount: number;
  event: HistoryEvent;
}

/** Sums of amounts over invoke-time and complete-time prefixes. */
export class TimedSums {
  readonly items: Amount[];
  readonly #invs: Float64Array;
  readonly #invCum: Float64Array;
  readonly #comps: Float64Array;
  readonly #compCum: Float64Array;

  constructor(items: Amount[]) {
    this.items = items;
    const byInv = [...items].sort((a, b) => a.inv - b.inv);
    const byComp = [...items].sort((a, b) => a.comp - b.comp);
    this.#invs = Float64Array.from(byInv, (a) => a.inv);
    this.#comps = Float64Array.from(byComp, (a) => a.comp);
    this.#invCum = new Float64Array(items.length + 1);
    this.#compCum = new Float64Array(items.length + 1);
    for (let i = 0; i < items.length; i++) {
      this.#invCum[i + 1] = (this.#invCum[i] as number) + (byInv[i] as Amount).amount;
      this.#compCum[i + 1] = (this.#compCum[i] as number) + (byComp[i] as Amount).amount;
    }
  }

  invLT(t: number): number {
    return this.#invCum[countLT(this.#invs, t)] as number;
  }
  invLE(t: number): number {
    return this.#invCum[countLE(this.#invs, t)] as number;
  }
  compLT(t: number): number {
    return this.#compCum[countLT(this.#comps, t)] as number;
  }
  compLE(t: number): number {
    return this.#compCum[countLE(this.#comps, t)] as number;
  }
}
