/** The shape of a V8 CPU profile (`node --cpu-prof`), as the profiling scripts read it, and its reading. */
import { textTable } from './stats.js';

export interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}

export interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime?: number;
  endTime?: number;
}

/**
 * A readable name for a frame: function, file (relative to the project) and line. tsx minifies
 * whitespace, so the lines of .ts files mean nothing and are left out (compile to JavaScript for lines).
 */
export function frameName(f: CallFrame): string {
  const file = f.url.replace(/^file:\/\/.*?\/(dist\/src|src|bench|node_modules)\//, '$1/');
  const where = file === '' ? '' : file.endsWith('.ts') ? file : `${file}:${f.lineNumber + 1}`;
  return `${f.functionName === '' ? '(anonymous)' : f.functionName} ${where}`.trim();
}

/** Sampled time of one profile: all of it, the busy part (not idle), and the busy part by layer and by function. */
export interface ProfileAnalysis {
  totalMs: number;
  busyMs: number;
  byLayer: Map<string, number>;
  /** Time in the function itself, by frameName. */
  self: Map<string, number>;
  /** Time in the function or anything it called (a recursive function counted once a sample). */
  inclusive: Map<string, number>;
}

/** Sums a profile's samples; `layerOf` names the layer a frame belongs to (each script has its own breakdown). */
export function analyseProfile(profile: CpuProfile, layerOf: (f: CallFrame) => string): ProfileAnalysis {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const byLayer = new Map<string, number>();
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  let totalMs = 0;
  let idleMs = 0;
  profile.samples.forEach((id, i) => {
    const ms = (profile.timeDeltas[i] ?? 0) / 1000;
    const node = byId.get(id);
    if (node === undefined) return;
    totalMs += ms;
    if (node.callFrame.functionName === '(idle)') {
      idleMs += ms;
      return;
    }
    add(byLayer, layerOf(node.callFrame), ms);
    add(self, frameName(node.callFrame), ms);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)?.callFrame;
      if (frame === undefined) break;
      const name = frameName(frame);
      if (seen.has(name)) continue;
      seen.add(name);
      add(inclusive, name, ms);
    }
  });
  return { totalMs, busyMs: totalMs - idleMs, byLayer, self, inclusive };
}

/** The `n` largest entries, largest first. */
export function top(m: Map<string, number>, n: number): Array<[string, number]> {
  return [...m.entries()].sort((a, b) => b[1] - a[1]).slice(0, n);
}

/** `ms` as a share of the busy time, e.g. `12.5 %`. */
export function shareOfBusy(ms: number, analysis: ProfileAnalysis): string {
  return `${((ms / analysis.busyMs) * 100).toFixed(1)} %`;
}

/** The busy time by layer as a table: self ms, share of busy, and `perRequest` of it. */
export function layerTable(analysis: ProfileAnalysis, perRequest: (ms: number) => string): string {
  return textTable(
    ['layer', 'self ms', 'share of busy', 'per request'],
    top(analysis.byLayer, 20).map(([k, v]) => [k, v.toFixed(0), shareOfBusy(v, analysis), perRequest(v)]),
  );
}
