/**
 * The service's rules (docs/service-model.md), each with a stable id and one line, and what judges
 * it: a scenario's own checks (per-response and end-of-run) and, with `--history`, the invariant
 * checkers of src/load/invariants. Scenarios declare the ids they exercise (`Scenario.rules`), and may
 * name them on the checks that judge them (`MixEntry.rules`, `CheckResult.rules`). A run's report
 * lists the rules the run exercised and judged — a declaring scenario ran and the checks judging
 * the rule judged at least one item, not all "not judged" — those it declared but judged nothing
 * of, and those it never touched, so a pass says what it covered. Plain data: ids are never
 * renamed (reports and scenario files name them).
 */
import { saysNotJudged } from '../../report/verdict.js';

/** Where a rule is judged besides the scenario's own checks: an invariant id of src/load/invariants/types.ts. */
export type RuleJudge =
  'credits.no-over-spend' | 'credits.no-under-serve' | 'credits.consistent' | 'credits.refill' | 'ratelimit.no-over-admission' | 'ratelimit.no-false-denial';

export interface ServiceRule {
  id: string;
  title: string;
  /** The heading of docs/service-model.md that states it. */
  section: string;
  /** Invariant checkers (with --history) that judge it too. */
  judgedBy: readonly RuleJudge[];
}

export const RULES: readonly ServiceRule[] = [
  { id: 'verify.not-found', title: 'an unknown or deleted key verifies as NOT_FOUND', section: 'verification-order', judgedBy: [] },
  { id: 'verify.disabled', title: 'a disabled key verifies as DISABLED, before its credits are looked at', section: 'verification-order', judgedBy: [] },
  { id: 'verify.expired', title: 'a key past its expires verifies as EXPIRED', section: 'verification-order', judgedBy: [] },
  {
    id: 'verify.rate-limited-spends-nothing',
    title: 'a RATE_LIMITED verification spends no credits',
    section: 'verification-order',
    judgedBy: ['credits.no-over-spend', 'credits.consistent'],
  },
  {
    id: 'credits.valid-decrements',
    title: 'cost ≤ balance: VALID, the balance drops by the cost',
    section: 'credits',
    judgedBy: ['credits.no-over-spend', 'credits.consistent'],
  },
  {
    id: 'credits.exceeded-keeps-balance',
    title: 'cost > balance: USAGE_EXCEEDED, nothing taken, the balance reported unchanged',
    section: 'credits',
    judgedBy: ['credits.no-under-serve', 'credits.consistent'],
  },
  { id: 'credits.cost-zero', title: 'cost 0 passes and changes nothing, even with 0 left', section: 'credits', judgedBy: ['credits.consistent'] },
  { id: 'credits.cost-many', title: 'cost > 1 takes exactly the cost', section: 'credits', judgedBy: ['credits.no-over-spend', 'credits.consistent'] },
  { id: 'credits.unlimited', title: 'a key without credits.remaining is never refused for credits', section: 'credits', judgedBy: [] },
  {
    id: 'credits.update-credits',
    title: 'updateCredits: set, increment, decrement (never below 0), no top-up lost',
    section: 'updating-credits',
    judgedBy: ['credits.consistent'],
  },
  { id: 'keys.update-allocation', title: 'updateKey credits {remaining: N}: a new balance at once, the refill kept', section: 'updating-a-key', judgedBy: [] },
  { id: 'keys.delete', title: 'a deleted key verifies as NOT_FOUND and every operation on it is a 404', section: 'keys', judgedBy: [] },
  { id: 'refill.daily-utc-midnight', title: 'daily refills happen at 00:00 UTC', section: 'refill', judgedBy: ['credits.refill'] },
  { id: 'refill.monthly-refill-day', title: 'monthly refills happen at 00:00 UTC on refillDay', section: 'refill', judgedBy: ['credits.refill'] },
  {
    id: 'refill.month-end',
    title: 'refillDay beyond a month’s end refills on its last day (29 February in a leap year)',
    section: 'refill',
    judgedBy: ['credits.refill'],
  },
  { id: 'refill.sets-balance', title: 'a refill sets the balance to amount, it does not add to it', section: 'refill', judgedBy: ['credits.refill'] },
  {
    id: 'refill.next-boundary',
    title: 'a key is first refilled at the next boundary after its creation, never back-dated',
    section: 'refill',
    judgedBy: ['credits.refill'],
  },
  {
    id: 'ratelimit.sliding-window',
    title: 'the window slides: just after an edge the previous window still weighs',
    section: 'the-sliding-window',
    judgedBy: ['ratelimit.no-over-admission', 'ratelimit.no-false-denial'],
  },
  {
    id: 'ratelimit.limit-exact',
    title: 'a fresh window admits exactly the limit, no more, no fewer',
    section: 'rate-limits',
    judgedBy: ['ratelimit.no-over-admission', 'ratelimit.no-false-denial'],
  },
  { id: 'ratelimit.cost-zero', title: 'a rate-limit check of cost 0 is always admitted and counts nothing', section: 'the-sliding-window', judgedBy: [] },
  { id: 'ratelimit.cost-many', title: 'a rate-limit check of cost > 1 counts its cost', section: 'rate-limits', judgedBy: ['ratelimit.no-over-admission'] },
  {
    id: 'ratelimit.override-exact',
    title: 'an exact override replaces the limit of its identifier',
    section: 'overrides',
    judgedBy: ['ratelimit.no-over-admission'],
  },
  {
    id: 'ratelimit.override-wildcard',
    title: 'a wildcard override matches, and an exact one beats it',
    section: 'overrides',
    judgedBy: ['ratelimit.no-over-admission'],
  },
  {
    id: 'ratelimit.identity-shared',
    title: "an identity's limit is one counter shared by all its keys",
    section: 'rate-limits-in-a-verification',
    judgedBy: ['ratelimit.no-over-admission'],
  },
  {
    id: 'ratelimit.key-limit-per-key',
    title: "a key's limit counts for that key alone",
    section: 'rate-limits-in-a-verification',
    judgedBy: ['ratelimit.no-over-admission'],
  },
  {
    id: 'ratelimit.multi-all-or-nothing',
    title: 'multiLimit is all or nothing: when one limit refuses, none counts the request',
    section: 'rate-limits',
    judgedBy: [],
  },
  {
    id: 'identities.lifecycle',
    title: 'identities: create, read by id or externalId, update as a whole, page, delete for good',
    section: 'identities',
    judgedBy: [],
  },
];

const IDS: ReadonlySet<string> = new Set(RULES.map((r) => r.id));

/** Whether `id` names a rule of RULES. */
export function isRuleId(id: string): boolean {
  return IDS.has(id);
}

/** What is wrong with a scenario's `rules` field, one message per problem; empty when nothing is. */
export function ruleIdProblems(rules: unknown): string[] {
  if (rules === undefined) return [];
  if (!Array.isArray(rules)) return ['rules must be an array of rule ids such as "credits.cost-zero" (docs/checking.md lists them)'];
  return rules
    .filter((id) => typeof id !== 'string' || !IDS.has(id))
    .map((id) => `rules names ${JSON.stringify(id)}, which is no rule id; the ids are ${[...IDS].join(', ')}`);
}

/** The rules a run exercised (the union of its scenarios' declared ids) and those it never touched, in RULES order. */
export function ruleCoverage(exercisedIds: Iterable<string>): { total: number; exercised: ServiceRule[]; untouched: ServiceRule[] } {
  const seen = new Set(exercisedIds);
  return { total: RULES.length, exercised: RULES.filter((r) => seen.has(r.id)), untouched: RULES.filter((r) => !seen.has(r.id)) };
}

/**
 * What the per-response checks of one run judged, per rule: the answers whose check was asked
 * (the service's answers, in measured phases) of the mix entries naming the rule, and which rules
 * any entry named at all.
 */
export class RuleTally {
  /** Rule id → answers judged by the checks of entries naming it. */
  readonly answers = new Map<string, number>();
  /** Rule ids some entry of the run named (whether or not an answer came). */
  readonly named = new Set<string>();
  /** Answers judged by any per-response check. */
  judgedAnswers = 0;

  /** An entry naming `rules` was built into a request. */
  built(rules: readonly string[] | undefined): void {
    for (const id of rules ?? []) this.named.add(id);
  }

  /** The check of an entry naming `rules` was asked on the service's answer. */
  judged(rules: readonly string[] | undefined): void {
    this.judgedAnswers++;
    for (const id of rules ?? []) this.answers.set(id, (this.answers.get(id) ?? 0) + 1);
  }
}

/** Whether an end-of-run check judged anything: its detail does not say "not judged" or "inconclusive". */
export function checkJudged(check: { detail: string }): boolean {
  return !saysNotJudged(check.detail);
}

/** What a run did, as far as its rules go. */
export interface RuleEvidence {
  /** The rules its scenario declares. */
  declared: readonly string[];
  /** Its end-of-run checks (the per-response checks are in `tally`). */
  checks: ReadonlyArray<{ detail: string; rules?: readonly string[] | undefined }>;
  tally: RuleTally | undefined;
  /** Invariant id → checks the history's checkers made (absent without --history). */
  invariantsChecked: ReadonlyMap<string, number>;
}

/**
 * The rules a run exercised and judged, those its scenario declared but judged nothing of, and
 * those it never touched, in RULES order. A declared rule is judged when a per-response check of
 * an entry naming it judged an answer, an end-of-run check naming it judged something, or an
 * invariant checker that judges it (ServiceRule.judgedBy) made a check. A declared rule that no
 * entry and no check of the run names is judged by the scenario's checks as a whole: any answer or
 * end-of-run check they judged.
 */
export function judgedRuleCoverage(evidence: RuleEvidence): { total: number; exercised: ServiceRule[]; notJudged: ServiceRule[]; untouched: ServiceRule[] } {
  const declared = new Set(evidence.declared);
  const named = new Set(evidence.tally?.named ?? []);
  for (const check of evidence.checks) for (const id of check.rules ?? []) named.add(id);
  const anyJudged = (evidence.tally?.judgedAnswers ?? 0) > 0 || evidence.checks.some(checkJudged);
  const judged = (rule: ServiceRule): boolean => {
    if ((evidence.tally?.answers.get(rule.id) ?? 0) > 0) return true;
    if (evidence.checks.some((c) => c.rules?.includes(rule.id) === true && checkJudged(c))) return true;
    if (rule.judgedBy.some((id) => (evidence.invariantsChecked.get(id) ?? 0) > 0)) return true;
    return !named.has(rule.id) && anyJudged;
  };
  const inRun = RULES.filter((r) => declared.has(r.id));
  return {
    total: RULES.length,
    exercised: inRun.filter(judged),
    notJudged: inRun.filter((r) => !judged(r)),
    untouched: RULES.filter((r) => !declared.has(r.id)),
  };
}
