/** Entry point of the recorder-memory child process (see runner-memory.ts); needs --expose-gc. */
import { measureRecorderMemory } from './runner-memory.js';
import { sendResult } from './subprocess.js';

sendResult(await measureRecorderMemory());
