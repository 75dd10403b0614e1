import { mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DirectorySyncs, syncFiles } from '../src/durable-files';

/** Descriptors this process holds on what lies under `root`: those of other suites in the same process come and go on their own. */
const openFdsUnder = (root: string) =>
  readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`).startsWith(root);
    } catch {
      return false;
    }
  }).length;

describe('syncFiles', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'durable-files-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  /** `count` files spread over `dirs` directories of `root`. */
  function files(count: number, dirs: number): string[] {
    return Array.from({ length: count }, (_, i) => {
      const dir = join(root, `d${i % dirs}`);
      mkdirSync(dir, { recursive: true });
      const path = join(dir, `f${i}`);
      writeFileSync(path, `file ${i}`);
      return path;
    });
  }

  it('syncs more files than one slice takes, leaving no descriptor open', async () => {
    const paths = files(200, 3);
    const before = openFdsUnder(root);
    await syncFiles(paths, new DirectorySyncs());
    expect(openFdsUnder(root)).toBe(before);
  });

  it('skips files whose table directory is gone, in any slice', async () => {
    const paths = files(130, 2);
    rmSync(join(root, 'd1'), { recursive: true });
    const before = openFdsUnder(root);
    await expect(syncFiles([...paths, join(root, 'gone', 'f')], new DirectorySyncs())).resolves.toBeUndefined();
    expect(openFdsUnder(root)).toBe(before);
  });

  it('fails on an error other than a missing file, after the slices before it', async () => {
    const paths = files(100, 2);
    // A path through a regular file: ENOTDIR, which says something is wrong rather than gone.
    const broken = join(paths[0], 'child');
    const before = openFdsUnder(root);
    await expect(syncFiles([...paths, broken], new DirectorySyncs())).rejects.toMatchObject({ code: 'ENOTDIR' });
    expect(openFdsUnder(root)).toBe(before);
  });
});
