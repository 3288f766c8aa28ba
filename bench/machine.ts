/** The machine the figures were measured on. */
import os from 'node:os';

export interface Machine {
  cpu: string;
  cores: number;
  memory: string;
  node: string;
  platform: string;
  date: string;
  load: string;
}

export function machine(): Machine {
  const cpus = os.cpus();
  return {
    cpu: cpus[0]?.model.trim() ?? 'unknown',
    cores: os.availableParallelism(),
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    node: process.version,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    date: new Date().toISOString(),
    load: loadText(),
  };
}

/** The 1-, 5- and 15-minute load averages, two decimals each, for a benchmark's printed figures. */
export function loadText(separator = ' '): string {
  return os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(separator);
}

export function describeMachine(m: Machine): string {
  return [
    `CPU:      ${m.cpu}, ${m.cores} cores`,
    `Memory:   ${m.memory}`,
    `Node:     ${m.node} (${m.platform})`,
    `Date:     ${m.date}`,
    `Load avg: ${m.load} (1, 5, 15 min)`,
  ].join('\n');
}

export function oneLineMachine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, Node ${m.node}, ${m.date.slice(0, 10)}`;
}
