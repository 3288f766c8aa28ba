/**
 * CPU time of a process and of its descendants, read from Linux's /proc (user + system, in µs).
 * `serve --workers N` runs an engine owner with N worker processes under it: their CPU per
 * request, role by role, says what each needs on a machine with a core per process, which a
 * 2-core machine cannot show by throughput (docs/benchmarks.md#serve---workers).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export interface TreeCpu {
  /** The process itself. */
  ownUs: number;
  /** Every descendant, added up. */
  descendantsUs: number;
}

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** [ppid, user + system ticks] of a process, or undefined when it is gone. */
function stat(pid: number): [number, number] | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return [Number(fields[1]), Number(fields[11]) + Number(fields[12])];
}

/**
 * CPU time (µs) of this process's children that have exited and been waited for (cutime +
 * cstime): a load generator run as a child (wrk) lands here when it exits, so the difference
 * across one run is the generator's CPU for that run. Undefined where /proc cannot be read.
 */
export function reapedChildrenCpuUs(): number | undefined {
  let text: string;
  try {
    text = readFileSync('/proc/self/stat', 'utf8');
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  // Fields 16 and 17 of proc(5) (cutime, cstime), counted from the state (field 3) at index 0.
  return ((Number(fields[13]) + Number(fields[14])) * 1e6) / clockTicks();
}

/** Whether /proc can be read here (Linux); elsewhere the per-role figures are not printed. */
export function treeCpuAvailable(): boolean {
  return stat(process.pid) !== undefined;
}

export function treeCpu(root: number): TreeCpu {
  const parents = new Map<number, number[]>();
  const ticks = new Map<number, number>();
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s === undefined) continue;
    ticks.set(pid, s[1]);
    const siblings = parents.get(s[0]) ?? [];
    siblings.push(pid);
    parents.set(s[0], siblings);
  }
  const toUs = (t: number) => (t * 1e6) / clockTicks();
  let descendants = 0;
  const queue = [...(parents.get(root) ?? [])];
  while (queue.length > 0) {
    const pid = queue.pop() as number;
    descendants += ticks.get(pid) ?? 0;
    queue.push(...(parents.get(pid) ?? []));
  }
  return { ownUs: toUs(ticks.get(root) ?? 0), descendantsUs: toUs(descendants) };
}
