/** Entry point of a benchmark child process (see subprocess.ts): `child.ts <task> [args…]`. */
import { isHashVariant } from './fixture.js';
import { sendResult } from './subprocess.js';
import { measureVerify } from './verify-throughput.js';
import { measureClock } from './clock-advance.js';

const [task, arg1] = process.argv.slice(2);

function count(value: string | undefined): number {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`expected a key count, got ${String(value)}`);
  return n;
}

switch (task) {
  case 'verify':
    if (!isHashVariant(arg1)) throw new Error(`verify: unknown hash variant ${String(arg1)}`);
    sendResult(measureVerify(arg1));
    break;
  case 'clock':
    sendResult(measureClock(count(arg1)));
    break;
  default:
    throw new Error(`unknown bench task ${String(task)}`);
}
