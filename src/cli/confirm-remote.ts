/**
 * Before `keysim run` sends anything to a target off this machine, the operator confirms it (or
 * passes --yes): scenarios create keys, identities and overrides there.
 */
import { createInterface } from 'node:readline/promises';
import { UsageError } from './exit-codes.js';

export async function confirmRemote(url: string, yes: boolean): Promise<void> {
  if (yes) return;
  const explanation = `${url} is not on this machine, and scenarios create keys, identities and rate-limit overrides there (named keysim-…, deleted at the end unless --keep).`;
  if (!process.stdin.isTTY) throw new UsageError(`${explanation} Pass --yes to confirm.`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`${explanation}\nFire load at it? [y/N] `);
    if (!/^y(es)?$/i.test(answer.trim())) throw new UsageError('Not confirmed: nothing was sent.');
  } finally {
    rl.close();
  }
}
