/**
 * Window edges found on a live target: cost-0 rate-limit probes (they consume nothing) on one
 * identifier of limit 1, whose answers' `reset` moves on when a window ends. On a simulator with a
 * frozen clock the clock is moved to the edge instead of waited for. Used by ratelimit-live-edges.
 */
import { type LostAnswers, type ScenarioContext, callOutcome, isInt, moveClockTo, okData, shown, sleep } from '../../src/index.js';
import { type Decision, localNowMs } from './window-bounds.js';

/** A cost-0 probe whose answer never came is asked again this many times at most. */
const PROBE_ATTEMPTS = 5;

/** What the probes read and record, in a scenario's fixtures. */
export interface EdgeProbes {
  namespace: string;
  /** Cost-0 probes per window length: they place the edges. */
  probes: Map<number, Decision[]>;
  /** Answers that never came (transport errors, a gateway's 502/504): their outcome is unknown. */
  lost: LostAnswers;
  /** Cost-0 probes answered (all on one identifier of limit 1: each must be admitted, none counts). */
  probesAnswered: number;
  /** Those refused: a cost-0 check that counted, or was refused. */
  probesRefused: string[];
  /** The simulator's frozen clock (moved to each edge) rather than a running one. */
  manualClock: boolean;
}

/** A cost-0 probe (it consumes nothing); undefined when its answer never came. */
async function probe(ctx: ScenarioContext, f: EdgeProbes, durationMs: number): Promise<Decision | undefined> {
  const invokeMs = localNowMs();
  const outcome = await callOutcome(ctx, 'ratelimit.limit', {
    namespace: f.namespace,
    identifier: `${ctx.tag}-clock`,
    limit: 1,
    duration: durationMs,
    cost: 0,
  });
  const completeMs = localNowMs();
  if (!outcome.answered) {
    f.lost.note(outcome.why);
    return undefined;
  }
  const r = outcome.response;
  const d = okData(r);
  if (typeof d === 'string' || !isInt(d.reset)) throw new Error(`a cost-0 probe of the ${durationMs} ms window answered ${shown(r)}`);
  f.probesAnswered++;
  // Its reset still places the edge; the refusal is the cost-0 check's finding.
  if (d.success !== true && f.probesRefused.length < 6)
    f.probesRefused.push(`a cost-0 probe of the ${durationMs} ms window (limit 1) was refused: ${shown(r)}`);
  const decision: Decision = { invokeMs, completeMs, admitted: true, resetMs: d.reset };
  f.probes.get(durationMs)?.push(decision);
  return decision;
}

/** A probe asked again while its answer never comes (it consumes nothing), a few times at most. */
async function answeredProbe(ctx: ScenarioContext, f: EdgeProbes, durationMs: number): Promise<Decision> {
  for (let attempt = 0; attempt < PROBE_ATTEMPTS; attempt++) {
    const p = await probe(ctx, f, durationMs);
    if (p !== undefined) return p;
  }
  throw new Error(`no cost-0 probe of the ${durationMs} ms window was answered in ${PROBE_ATTEMPTS} attempts (${f.lost.text()})`);
}

/** Probes until the window moves on; returns the local time it was seen. Bounded by the window length. */
export async function awaitEdge(ctx: ScenarioContext, f: EdgeProbes, durationMs: number, hintMs?: number): Promise<number> {
  if (f.manualClock && ctx.admin !== undefined) {
    // The embedded simulator's clock stands still: move it to the edge instead of waiting for it.
    await moveClockTo(ctx.admin, (await answeredProbe(ctx, f, durationMs)).resetMs);
    return (await answeredProbe(ctx, f, durationMs)).completeMs;
  }
  if (hintMs !== undefined && hintMs - 150 > localNowMs()) await sleep(hintMs - 150 - localNowMs());
  const first = await answeredProbe(ctx, f, durationMs);
  const deadline = localNowMs() + durationMs + 10_000;
  for (;;) {
    // A probe whose answer never came says nothing about the edge: the next one is asked.
    const p = await probe(ctx, f, durationMs);
    if (p !== undefined && p.resetMs > first.resetMs) return p.completeMs;
    if (localNowMs() > deadline)
      throw new Error(`no window edge seen in ${durationMs + 10_000} ms of ${durationMs} ms windows: the answers' reset never moved (${first.resetMs})`);
    await sleep(5);
  }
}
