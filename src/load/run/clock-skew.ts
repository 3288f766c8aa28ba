/**
 * Measures how far a live target's clock may be from ours, so that the history's wall times can
 * be widened by a bound that is sound but not needlessly wide. A live target records no service
 * times: the checkers place each decision in [sent − skew, answered + skew]. With a fixed second
 * of skew, a 1 s rate-limit window can never be told apart from the next, so the previous
 * window's weight is unprovable and a fixed-window limiter passes for a sliding one.
 *
 * Each probe is one request; its `Date` header names the whole second S of the target's clock at
 * some instant while the request was in flight, between our send s and our receipt r. With
 * offset = target clock − our clock, S·1000 ≤ (that instant + offset) < S·1000 + 1000, so
 *
 *   S·1000 − r ≤ offset < S·1000 + 1000 − s.
 *
 * Every probe's interval holds the offset; their intersection is the answer. One probe alone is
 * a second wide (the header's resolution); probes sent at phases spread over a second, then sent
 * at the estimated tick of the target's second (bisection), narrow it to about one round trip.
 * The skew is the largest |offset| the intersection allows, plus a margin for the clock drifting
 * during the run and for a server whose cached `Date` turns over a little late.
 *
 * This assumes that the `Date` header comes from the clock the service decides with (the same
 * host, or hosts kept in step): a gateway with its own clock in front of the service would make
 * the measurement meaningless. Probes that disagree (an empty intersection) say so, and the
 * default second is used.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Http1Client } from '../http1/index.js';
import { decodeBody } from '../http1/index.js';
import { readServiceAnswer } from '../answers/index.js';
import { wallNowMs } from '../history/index.js';
import type { TargetCredentials } from '../target/index.js';

/** Added to the measured bound: a `Date` cache refreshed late, jitter of the clocks. */
export const SKEW_MARGIN_MS = 50;
/**
 * How fast the two clocks may drift apart during a run, in parts per million: clocks kept by NTP
 * stay well within it (our history clock is monotonic and is not slewed with the system clock).
 */
export const DRIFT_PPM = 100;

export interface SkewProbe {
  /** Our clock when the request was sent, Unix ms. */
  sentMs: number;
  /** Our clock when the answer arrived, Unix ms. */
  receivedMs: number;
  /**
   * The answer's `Date` header, Unix ms (a whole second); undefined when absent or unreadable, and
   * when the answer was not the service's (a gateway's page carries the gateway's clock).
   */
  dateMs: number | undefined;
}

export interface MeasuredSkew {
  /** Bound on |target clock − our clock| to use, ms (whole ms). */
  skewMs: number;
  /** The offset (target − ours) lies in [offsetLoMs, offsetHiMs), ms. */
  offsetLoMs: number;
  offsetHiMs: number;
  probes: number;
  roundTripMinMs: number;
  roundTripMaxMs: number;
  /** How the figure was obtained, for the report. */
  method: string;
}

/** Why a measurement gave no bound. */
export class SkewUnmeasurable extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'SkewUnmeasurable';
  }
}

function round1(ms: number): string {
  return (Math.round(ms * 10) / 10).toFixed(1);
}

/** The offset interval every probe allows (lo inclusive, hi exclusive). */
export function offsetBounds(probes: readonly SkewProbe[]): { lo: number; hi: number } {
  let lo = Number.NEGATIVE_INFINITY;
  let hi = Number.POSITIVE_INFINITY;
  for (const p of probes) {
    if (p.dateMs === undefined) continue;
    lo = Math.max(lo, p.dateMs - p.receivedMs);
    hi = Math.min(hi, p.dateMs + 1000 - p.sentMs);
  }
  return { lo, hi };
}

/** The skew the probes prove (see the comment at the top); throws SkewUnmeasurable when they cannot. */
export function skewFromProbes(probes: readonly SkewProbe[], marginMs = SKEW_MARGIN_MS): MeasuredSkew {
  const dated = probes.filter((p) => p.dateMs !== undefined);
  if (dated.length === 0)
    throw new SkewUnmeasurable("no answer of the service carried a Date header (answers that were not the service's, such as a gateway's pages, are not read)");
  const { lo, hi } = offsetBounds(dated);
  if (!(lo < hi)) {
    throw new SkewUnmeasurable(
      `its Date headers disagree with each other by more than their round trips (offset ≥ ${round1(lo)} ms and < ${round1(hi)} ms): several clocks, or a stale Date`,
    );
  }
  const trips = dated.map((p) => p.receivedMs - p.sentMs);
  const roundTripMinMs = Math.min(...trips);
  const roundTripMaxMs = Math.max(...trips);
  const skewMs = Math.ceil(Math.max(Math.abs(lo), Math.abs(hi)) + marginMs);
  return {
    skewMs,
    offsetLoMs: lo,
    offsetHiMs: hi,
    probes: dated.length,
    roundTripMinMs,
    roundTripMaxMs,
    method:
      `measured: ${dated.length} requests' Date headers (round trips ${round1(roundTripMinMs)}–${round1(roundTripMaxMs)} ms) place the target's clock ` +
      `${round1(lo)} … ${round1(hi)} ms from ours; skew = the larger magnitude + ${marginMs} ms margin`,
  };
}

export interface MeasureOptions {
  /** Probes spread over one second (default 12). */
  spread?: number;
  /** Probes aimed at the target's estimated second tick, each halving the interval (default 3). */
  bisect?: number;
  marginMs?: number;
  /** Our clock and a way to wait on it (default: the history's wall clock and real timers). */
  clock?: { now(): number; sleep(ms: number): Promise<void> };
}

/**
 * Sends probes and bounds the skew. `probe` sends one request and reports its times and `Date`.
 * Takes about (1 + bisect) seconds.
 */
export async function measureSkew(probe: () => Promise<SkewProbe>, options: MeasureOptions = {}): Promise<MeasuredSkew> {
  const spread = options.spread ?? 12;
  const bisect = options.bisect ?? 3;
  const clock = options.clock;
  const now = clock === undefined ? wallNowMs : () => clock.now();
  const wait = clock === undefined ? (ms: number) => sleep(ms) : (ms: number) => clock.sleep(ms);
  const probes: SkewProbe[] = [];
  // Spread over a second, so that some answers come from either side of a tick of the target's second.
  const step = Math.ceil(1000 / spread) + 3;
  for (let i = 0; i < spread; i++) {
    const started = now();
    probes.push(await probe());
    const rest = step - (now() - started);
    if (rest > 0 && i < spread - 1) await wait(rest);
  }
  for (let i = 0; i < bisect; i++) {
    const { lo, hi } = offsetBounds(probes);
    if (!(lo < hi) || !Number.isFinite(lo) || !Number.isFinite(hi)) break;
    // Aim the middle of a flight at the instant our clock reads a tick of the target's second if
    // the offset were the middle of the interval: the answer's second tells which half holds it.
    const trip = Math.min(...probes.map((p) => p.receivedMs - p.sentMs));
    const mid = (lo + hi) / 2;
    const at = now();
    const tick = Math.ceil((at + trip / 2 + mid + 20) / 1000) * 1000 - mid;
    await wait(Math.max(0, tick - trip / 2 - at));
    probes.push(await probe());
  }
  return skewFromProbes(probes, options.marginMs);
}

/**
 * One probe against a target: the request keysim's reachability check makes. Of several `Date`
 * headers (a proxy adding its own) the first valid one is read. The `Date` of an answer that is
 * not the service's (service-answer.ts: a gateway's 502 page, a proxy's HTML) is the gateway's
 * clock, not the service's: it is not read. The probes share one client, closed when `done()` is called.
 */
export function targetProbe(target: TargetCredentials, timeoutMs: number): { probe: () => Promise<SkewProbe>; done: () => Promise<void> } {
  const client = new Http1Client(target.url, { timeoutMs, connections: 1, ca: target.ca, dates: true });
  const probe = async (): Promise<SkewProbe> => {
    const sentMs = wallNowMs();
    const res = await client.request({
      method: 'POST',
      path: '/v2/identities.listIdentities',
      headers: { authorization: `Bearer ${target.rootKey}` },
      body: JSON.stringify({ limit: 1 }),
      retry: true,
    });
    const receivedMs = wallNowMs();
    let service = false;
    try {
      service = readServiceAnswer(res.status, decodeBody(res.status, res.contentType, res.contentEncoding, res.body)).service;
    } catch {
      // A body that does not decode is no answer of the service either.
    }
    return { sentMs, receivedMs, dateMs: service ? res.dateMs : undefined };
  };
  return { probe, done: () => client.close() };
}

/** measureSkew over targetProbe, its client closed after. */
async function measureTargetSkew(target: TargetCredentials, timeoutMs: number, options: MeasureOptions | undefined): Promise<MeasuredSkew> {
  const { probe, done } = targetProbe(target, timeoutMs);
  try {
    return await measureSkew(probe, options);
  } finally {
    await done();
  }
}

/** The skew a run records in its history, and how it was obtained (for the report). */
export interface RunSkew {
  wallSkewMs: number;
  note: string;
  /** Measured (so worth measuring again after the run), rather than given or the default. */
  measured: boolean;
}

/**
 * The skew for a run's history on a live target: `given` (the run's --skew) as is, else measured;
 * when the target's answers cannot bound it, the default (`fallbackMs`), said so.
 */
export async function liveRunSkew(
  target: TargetCredentials,
  options: { given?: number | undefined; timeoutMs: number; fallbackMs: number; plannedMs: number; measure?: MeasureOptions },
): Promise<RunSkew> {
  if (options.given !== undefined)
    return { wallSkewMs: options.given, note: `Clock skew of the live target: ${options.given} ms, as given (--skew), not measured.`, measured: false };
  try {
    const m = await measureTargetSkew(target, Math.min(options.timeoutMs, 10_000), options.measure);
    // The bound must hold until the last answer: allow for drift over the planned run and a minute of set-up.
    const driftMs = Math.ceil((DRIFT_PPM * (options.plannedMs + 60_000)) / 1e6);
    const wallSkewMs = m.skewMs + driftMs;
    return {
      wallSkewMs,
      note: `Clock skew of the live target: ±${wallSkewMs} ms, ${m.method}, + ${driftMs} ms for drift (${DRIFT_PPM} ppm over the run).`,
      measured: true,
    };
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      wallSkewMs: options.fallbackMs,
      note: `Clock skew of the live target: could not be measured (${reason}); the default ±${options.fallbackMs} ms is used, too wide to judge the previous window's weight of short rate-limit windows.`,
      measured: false,
    };
  }
}

/**
 * After the run, measures again: if the bound the history was recorded with cannot be confirmed
 * (the clocks drifted apart, or slower round trips leave more uncertainty), the run's own check
 * uses the new, wider bound and says so, with the `keysim check --skew` that re-checks the saved
 * history the same way. Otherwise `skew` as is.
 */
export async function remeasuredRunSkew(target: TargetCredentials, skew: RunSkew, options: { timeoutMs: number; measure?: MeasureOptions }): Promise<RunSkew> {
  if (!skew.measured) return skew;
  try {
    const m = await measureTargetSkew(target, Math.min(options.timeoutMs, 10_000), options.measure ?? { spread: 8, bisect: 2 });
    if (m.skewMs <= skew.wallSkewMs) return skew;
    return {
      wallSkewMs: m.skewMs,
      note:
        `${skew.note} Measured again after the run: ±${m.skewMs} ms (${m.method}) — wider than the bound the history was recorded with (the clocks drifted apart, or the round trips were slower), ` +
        `so the invariants were checked with ±${m.skewMs} ms; re-check the saved history with keysim check --skew ${m.skewMs}.`,
      measured: true,
    };
  } catch (error) {
    return { ...skew, note: `${skew.note} It could not be measured again after the run (${error instanceof Error ? error.message : String(error)}).` };
  }
}
