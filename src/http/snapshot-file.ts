/**
 * A snapshot file read one record at a time (engine SnapshotReader): the snapshot itself, the
 * answer of `/_sim/snapshot` (`{ meta, data }`) or a `/_sim/restore` body (`{ snapshot }`). Its
 * size is bounded by memory only: neither by an HTTP body limit nor by the longest string the
 * runtime can parse at once. The file is read into one reused buffer, so reading it allocates no
 * memory outside the JavaScript heap that the process would keep afterwards.
 */
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { type CheckedSnapshot, SnapshotReader } from '../engine/index.js';

const READ_BYTES = 1 << 16;
const NOT_JSON = 'The snapshot is not valid JSON: ';

export type SnapshotFileRead = { ok: true; snapshot: CheckedSnapshot } | { ok: false; message: string };

export async function readSnapshotFile(path: string, sha256: (text: string) => string): Promise<SnapshotFileRead> {
  const reader = new SnapshotReader(sha256);
  const notJson = (problem: string): SnapshotFileRead => ({
    ok: false,
    message: `is not JSON (${problem}); it should hold a snapshot taken with /_sim/snapshot.`,
  });
  try {
    const file = await open(path, 'r');
    try {
      const buffer = Buffer.allocUnsafeSlow(READ_BYTES);
      const decoder = new StringDecoder('utf8');
      for (;;) {
        const { bytesRead } = await file.read(buffer, 0, READ_BYTES, null);
        const problem = reader.write(bytesRead === 0 ? decoder.end() : decoder.write(buffer.subarray(0, bytesRead)));
        if (problem !== undefined) return notJson(problem);
        if (bytesRead === 0) break;
      }
    } finally {
      await file.close();
    }
  } catch (error) {
    const code = (error as { code?: string }).code;
    const why =
      code === 'ENOENT'
        ? 'no such file'
        : code === 'EISDIR'
          ? 'is a directory'
          : code === 'EACCES'
            ? 'permission denied'
            : error instanceof Error
              ? error.message
              : String(error);
    return { ok: false, message: `cannot read the file (${why}).` };
  }
  const checked = reader.end();
  if (checked.ok) return { ok: true, snapshot: checked.value };
  const { detail, errors } = checked.error;
  if (detail.startsWith(NOT_JSON)) return notJson(detail.slice(NOT_JSON.length, -1));
  const first = errors?.[0];
  return { ok: false, message: `the snapshot cannot be restored: ${detail}${first === undefined ? '' : ` (${first.location}: ${first.message})`}` };
}
