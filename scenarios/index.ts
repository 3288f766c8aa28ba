/** The scenarios `keysim run` and `keysim list` know, by name; `mixed` runs when none is named. */
import type { Scenario } from '../src/index.js';
import convergence from './convergence.js';
import creditsDrain from './credits-drain.js';
import identitiesCrud from './identities-crud.js';
import keyStates from './key-states.js';
import limitedKeys from './limited-keys.js';
import mixed from './mixed.js';
import planChange from './plan-change.js';
import ratelimitLiveEdges from './ratelimit-live-edges.js';
import ratelimitRules from './ratelimit-rules.js';
import ratelimitWindowEdge from './ratelimit-window-edge.js';
import refillMidnight from './refill-midnight.js';
import refillMonthEnd from './refill-month-end.js';
import smoke from './smoke.js';
import staleCreditReplay from './stale-credit-replay.js';
import verifyHotKeys from './verify-hot-keys.js';
import visibility from './visibility.js';

export const SCENARIOS: Readonly<Record<string, Scenario<unknown>>> = {
  smoke,
  'verify-hot-keys': verifyHotKeys,
  'credits-drain': creditsDrain,
  'refill-month-end': refillMonthEnd,
  'refill-midnight': refillMidnight,
  'ratelimit-window-edge': ratelimitWindowEdge,
  'ratelimit-live-edges': ratelimitLiveEdges,
  'identities-crud': identitiesCrud,
  'plan-change': planChange,
  'limited-keys': limitedKeys,
  'key-states': keyStates,
  'ratelimit-rules': ratelimitRules,
  'stale-credit-replay': staleCreditReplay,
  visibility,
  convergence,
  mixed,
};

export const DEFAULT_SCENARIO = 'mixed';
