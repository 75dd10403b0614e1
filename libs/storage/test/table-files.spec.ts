import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SwiftServer, startSwift } from '../../../test/support/swift';
import { LocalFiles, S3Files, StorageUnavailableError, TableFiles } from '../src';

/** The same behaviour from both adapters of the warehouse's file port: a local disk and a real S3 server. */
describe.each([
  ['a local disk', async () => ({ files: new LocalFiles() as TableFiles, root: mkdtempSync(join(tmpdir(), 'files-')), done: async () => undefined })],
  [
    'S3 (Swift)',
    async () => {
      const swift: SwiftServer = await startSwift();
      await swift.createBucket('conformance');
      const files = new S3Files({
        endpoint: swift.endpoint,
        region: swift.region,
        forcePathStyle: true,
        credentials: { accessKeyId: swift.accessKeyId, secretAccessKey: swift.secretAccessKey },
      });
      return {
        files: files as TableFiles,
        root: 's3://conformance/root',
        swift,
        done: async () => {
          files.close();
          await swift.stop();
        },
      };
    },
  ],
])('table files on %s', (_name, open) => {
  let files: TableFiles;
  let root: string;
  let setup: Awaited<ReturnType<typeof open>>;

  beforeAll(async () => {
    setup = await open();
    ({ files, root } = setup);
  }, 60_000);
  afterAll(() => setup?.done());

  it('writes, reads whole and in ranges, and heads a file', async () => {
    await files.write(`${root}/t.lance/a.bin`, Buffer.from('0123456789'));
    expect((await files.read(`${root}/t.lance/a.bin`))!.toString()).toBe('0123456789');
    expect((await files.readRange(`${root}/t.lance/a.bin`, 3, 4)).toString()).toBe('3456');
    expect(await files.head(`${root}/t.lance/a.bin`)).toMatchObject({ size: 10 });
    expect(await files.read(`${root}/t.lance/missing`)).toBeUndefined();
    expect(await files.head(`${root}/t.lance/missing`)).toBeUndefined();
  });

  it('reads the tail of a file with what a head tells of it, in one read', async () => {
    const head = await files.head(`${root}/t.lance/a.bin`);
    const tail = await files.readTail(`${root}/t.lance/a.bin`, 4);
    expect(tail!.bytes.toString()).toBe('6789');
    expect(tail!.info).toEqual({ ...head, modifiedMillis: expect.any(Number) });
    expect((await files.readTail(`${root}/t.lance/a.bin`, 100))!.bytes.toString()).toBe('0123456789');
    await files.write(`${root}/tails/empty.bin`, Buffer.alloc(0));
    expect(await files.readTail(`${root}/tails/empty.bin`, 4)).toMatchObject({ bytes: Buffer.alloc(0), info: { size: 0 } });
    expect(await files.readTail(`${root}/t.lance/missing`, 4)).toBeUndefined();
  });

  it('copies a file to another name', async () => {
    await files.copy(`${root}/t.lance/a.bin`, `${root}/t.lance/_versions/b.bin`);
    expect((await files.head(`${root}/t.lance/_versions/b.bin`))?.size).toBe(10);
    expect((await files.read(`${root}/t.lance/_versions/b.bin`))!.toString()).toBe('0123456789');
  });

  it('lists the files directly in a directory only', async () => {
    await files.write(`${root}/t.lance/_versions/c.bin`, Buffer.from('c'));
    await files.write(`${root}/t.lance/_versions/deeper/d.bin`, Buffer.from('d'));
    const listed = await files.list(`${root}/t.lance/_versions`);
    expect(listed.map((f) => f.name).sort()).toEqual(['b.bin', 'c.bin']);
    expect(listed.find((f) => f.name === 'c.bin')).toMatchObject({ size: 1 });
    expect(await files.list(`${root}/nothing-here`)).toEqual([]);
    expect([...(await files.names(`${root}/t.lance/_versions`))].sort()).toEqual(['b.bin', 'c.bin']);
    expect(await files.names(`${root}/nothing-here`)).toEqual([]);
    // A file named as a directory holds no names.
    expect(await files.names(`${root}/t.lance/_versions/c.bin`)).toEqual([]);
  });

  it('lists only the files a selector picks from all the names, with their attributes', async () => {
    const seen: string[][] = [];
    const listed = await files.list(`${root}/t.lance/_versions`, (names) => {
      seen.push([...names].sort());
      return new Set(['c.bin', 'not-there.bin']);
    });
    expect(seen).toEqual([['b.bin', 'c.bin']]);
    expect(listed).toEqual([{ name: 'c.bin', size: 1, modifiedMillis: expect.any(Number), ...(listed[0]?.eTag ? { eTag: listed[0].eTag } : {}) }]);
    expect(await files.list(`${root}/t.lance/_versions`, () => new Set())).toEqual([]);
    expect(await files.list(`${root}/nothing-here`, () => new Set(['b.bin']))).toEqual([]);
  });

  it('removes a file, and a whole tree, answering how many files went', async () => {
    await files.remove(`${root}/t.lance/_versions/c.bin`);
    await files.remove(`${root}/t.lance/_versions/never-there`);
    expect(await files.head(`${root}/t.lance/_versions/c.bin`)).toBeUndefined();
    expect(await files.removeTree(`${root}/t.lance`)).toBe(3);
    expect(await files.list(`${root}/t.lance`)).toEqual([]);
    expect(await files.removeTree(`${root}/t.lance`)).toBe(0);
  });

  it('says the store is unavailable, not that a file is missing, when it cannot be reached', async () => {
    const swift = (setup as { swift?: SwiftServer }).swift;
    if (!swift) {
      await expect(files.readRange(`${root}/gone.bin`, 0, 1)).rejects.toThrow(/ENOENT/);
      return;
    }
    await swift.pause();
    try {
      await expect(files.head(`${root}/t.lance/a.bin`)).rejects.toBeInstanceOf(StorageUnavailableError);
      await expect(files.write(`${root}/x`, Buffer.from('x'))).rejects.toBeInstanceOf(StorageUnavailableError);
    } finally {
      await swift.resume();
    }
    expect(await files.head(`${root}/t.lance/a.bin`)).toBeUndefined();
  });
});
