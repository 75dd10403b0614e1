/**
 * A data-plane process: runs the data operations its parent (an API or a worker) sends it, one at a
 * time, on Lance handles of its own. Lance's native code runs the requests' filters and bodies
 * here, so a crash or a runaway allocation ends this process and the one request it was running,
 * never the parent that answers catalog calls.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { LanceTables } from '../lance-tables';
import { DataPlaneExecutor } from './data-plane-executor';
import { DataPlaneOp } from './data-plane-ops';
import { DataPlaneProcessSettings, FromChild, SETTINGS_ENV, ToChild, toWire } from './data-plane-wire';

const settings = JSON.parse(process.env[SETTINGS_ENV] ?? 'null') as DataPlaneProcessSettings | null;
delete process.env[SETTINGS_ENV];
if (!settings || typeof process.send !== 'function') {
  console.error('data-plane process: started without its settings or an IPC channel to its parent');
  process.exit(2);
}

const executor = new DataPlaneExecutor(
  new LanceTables({
    selfUrl: () => settings.selfUrl,
    headers: settings.headers,
    cachedTables: settings.cachedTables,
    storageOptions: settings.storageOptions,
  }),
);
const input = openSync(settings.inputPath, 'r');
/** Kept from one body to the next: a fresh buffer costs its page faults every time. */
let inputBuffer = Buffer.alloc(0);
const resumes = new Map<number, () => void>();

function send(message: FromChild): void {
  process.send!(message);
}

function readInput(length: number): Buffer {
  if (inputBuffer.length < length) inputBuffer = Buffer.allocUnsafe(Math.max(length, inputBuffer.length * 2));
  let at = 0;
  while (at < length) {
    const n = readSync(input, inputBuffer, at, length - at, at);
    if (n === 0) throw new Error(`the request body's file ended at ${at} of ${length} bytes`);
    at += n;
  }
  return inputBuffer.subarray(0, length);
}

async function run(id: number, op: DataPlaneOp, inputLength: number | undefined, expectedWriter: string | undefined): Promise<void> {
  let wrote: string | undefined;
  try {
    if (inputLength !== undefined && 'body' in op) op.body = readInput(inputLength);
    const result = await executor.run(op, {
      expectedWriter,
      wrote: (writer) => (wrote = writer),
      // Lance's commit waits for the parent to expect it: see DataPlaneHooks.writing.
      writing: (writer) => {
        send({ t: 'writing', id, writer });
        return new Promise<void>((resume) => resumes.set(id, resume));
      },
    });
    send({ t: 'done', id, result, ...(wrote !== undefined ? { writer: wrote } : {}) });
  } catch (e) {
    send({ t: 'failed', id, error: toWire(e) });
  } finally {
    resumes.delete(id);
  }
}

process.on('message', (message: ToChild) => {
  if (message.t === 'run') void run(message.id, message.op, message.input, message.expectedWriter);
  else if (message.t === 'go') resumes.get(message.id)?.();
});
// The parent is gone (it exited, or was killed): nothing is left to answer.
process.on('disconnect', () => {
  closeSync(input);
  void executor.close().finally(() => process.exit(0));
});
send({ t: 'ready' });
