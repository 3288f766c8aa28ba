/**
 * The CPU readings of the `serve --workers` benchmark (bench/process-tree-cpu.ts), from Linux's
 * /proc: a process tree's own and descendants' CPU, and the CPU of children that have exited
 * (how wrk's CPU is read). The children here burn a set amount of their own CPU time, not of wall
 * time, so the figures do not depend on the machine's pace.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, test } from 'vitest';
import { reapedChildrenCpuUs, treeCpu, treeCpuAvailable } from '../../bench/process-tree-cpu.js';

/** A node child that spins until it has used `ms` of CPU, then waits for stdin to close (or exits). */
function burner(ms: number, stay: boolean): ChildProcess {
  const code = `const end = ${ms * 1000}; while (process.cpuUsage().user + process.cpuUsage().system < end) {} ; process.stdout.write('done\\n'); ${stay ? "process.stdin.resume(); process.stdin.on('end', () => process.exit(0));" : ''}`;
  return spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
}

function done(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => child.stdout?.once('data', () => resolve()));
}

function exited(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

describe.runIf(treeCpuAvailable())('CPU per process from /proc', () => {
  test("a child's CPU is counted among this process's descendants while it runs", async () => {
    const child = burner(300, true);
    try {
      await done(child);
      const tree = treeCpu(process.pid);
      // At least the 300 ms it burned, less one clock tick of rounding per reading.
      expect(tree.descendantsUs).toBeGreaterThanOrEqual(300_000 - 20_000);
      expect(tree.ownUs).toBeGreaterThan(0);
    } finally {
      child.stdin?.end();
      await exited(child);
    }
  }, 60_000);

  test("an exited child's CPU lands in this process's reaped children (how wrk's CPU is read)", async () => {
    const before = reapedChildrenCpuUs() as number;
    expect(before).toBeGreaterThanOrEqual(0);
    const child = burner(300, false);
    await exited(child);
    const after = reapedChildrenCpuUs() as number;
    expect(after - before).toBeGreaterThanOrEqual(300_000 - 20_000);
  }, 60_000);
});
