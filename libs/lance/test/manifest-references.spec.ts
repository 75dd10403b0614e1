import * as lancedb from '@lancedb/lancedb';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CatalogError, ErrorCode } from '@app/catalog';
import { LocalFiles } from '@app/storage';
import { foreignReference, readManifestReferences, refuseForeignReferences } from '../src/manifest-references';
import { checkStoredManifest } from '../src/stored-manifests';
import { Crafted, manifestFile } from './crafted-manifest';

const manifestsOf = (location: string) =>
  readdirSync(join(location, '_versions'))
    .filter((f) => f.endsWith('.manifest'))
    .map((f) => readFileSync(join(location, '_versions', f)));

/** What the check throws, or undefined when it lets the manifest through. */
function refusal(bytes: Uint8Array, tableLocation: string): CatalogError | undefined {
  try {
    expect(refuseForeignReferences({ bytes, offset: 0 }, tableLocation, 'm')).toBeUndefined();
    return undefined;
  } catch (e) {
    if (e instanceof CatalogError) return e;
    throw e;
  }
}

/**
 * Manifests written by Lance itself (@lancedb/lancedb 0.39): a table's own (with deletions and an
 * index), its branches' (which read main's files through base paths inside the table), and a
 * shallow clone of it (whose base path is the source table).
 */
describe('the references of real Lance manifests', () => {
  const dir = mkdtempSync(join(tmpdir(), 'manifest-refs-'));
  const source = join(dir, 'src.lance');
  const clone = join(dir, 'clone.lance');

  beforeAll(async () => {
    const db = await lancedb.connect(dir);
    const table = await db.createTable('src', Array.from({ length: 300 }, (_, i) => ({ id: i, secret: `s${i}` })));
    await table.delete('id < 5');
    await table.createIndex('id');
    const b1 = await (await table.branches()).create('b1');
    await b1.add([{ id: 1000, secret: 'on b1' }]);
    await b1.delete('id = 6');
    const b2 = await (await b1.branches()).create('b2', 'b1');
    await b2.add([{ id: 2000, secret: 'on b2' }]);
    (await db.cloneTable('clone', source, { isShallow: true })).close();
    for (const t of [table, b1, b2]) t.close();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("passes every version of a table, and of its branches, checked against the table's location", () => {
    const manifests = [...manifestsOf(source), ...manifestsOf(join(source, 'tree', 'b1')), ...manifestsOf(join(source, 'tree', 'b2'))];
    expect(manifests.length).toBeGreaterThanOrEqual(8);
    for (const bytes of manifests) expect(refusal(bytes, source)).toBeUndefined();
    // Branches do read through base paths: the check had something to pass.
    const b2 = readManifestReferences({ bytes: manifestsOf(join(source, 'tree', 'b2'))[0], offset: 0 });
    expect(b2.kind === 'manifest' && b2.references.basePaths.map((b) => b.path).sort()).toEqual([source, join(source, 'tree', 'b1')]);
  });

  it('refuses a shallow clone, whose files and index are the source table’s, naming no path', () => {
    const [bytes] = manifestsOf(clone);
    const reading = readManifestReferences({ bytes, offset: 0 });
    expect(reading.kind).toBe('manifest');
    if (reading.kind !== 'manifest') return;
    expect(reading.references.basePaths).toEqual([{ id: 0, path: source }]);
    expect(reading.references.baseIds).toEqual(
      new Map([
        ['a data file', new Set([0])],
        ['a deletion file', new Set([0])],
        ['an index', new Set([0])],
      ]),
    );

    const refused = refusal(bytes, clone)!;
    expect(refused.code).toBe(ErrorCode.InvalidInput);
    expect(refused.message).toBe("manifest 'm' references files outside this table's location: its base path 0 lies outside this table's location");
    expect(refused.detail).toContain('Shallow clones across tables are not allowed');
    expect(`${refused.message} ${refused.detail}`).not.toContain(dir);
    // A branch's lines lie inside the table, another table's do not, whatever their names share.
    expect(refusal(bytes, `${source}-other`)).toBeDefined();
    expect(refusal(bytes, dir)).toBeUndefined();
  });

  it('reads what it needs from a tail, and asks for the rest when the tail is short of it', () => {
    const [bytes] = manifestsOf(clone);
    const short = { bytes: bytes.subarray(bytes.length - 20), offset: bytes.length - 20 };
    const needs = refuseForeignReferences(short, clone, 'm');
    expect(needs).toBeDefined();
    expect(needs!.needsFrom).toBeLessThan(bytes.length - 20);
    // The index section sits before the manifest message: a tail holding only the message asks for it.
    const again = refuseForeignReferences({ bytes: bytes.subarray(needs!.needsFrom), offset: needs!.needsFrom }, clone, 'm');
    expect(again!.needsFrom).toBeLessThan(needs!.needsFrom);
    expect(() => refuseForeignReferences({ bytes: bytes.subarray(again!.needsFrom), offset: again!.needsFrom }, clone, 'm')).toThrow(CatalogError);
  });

  it('checks a stored manifest through one read of its tail', async () => {
    const files = new LocalFiles();
    const name = readdirSync(join(clone, '_versions')).find((f) => f.endsWith('.manifest'))!;
    await expect(checkStoredManifest(files, join(clone, '_versions', name), clone, 'm')).rejects.toMatchObject({ code: ErrorCode.InvalidInput });
    const own = readdirSync(join(source, '_versions')).find((f) => f.endsWith('.manifest'))!;
    await expect(checkStoredManifest(files, join(source, '_versions', own), source, 'm')).resolves.toMatchObject({ size: expect.any(Number) });
    await expect(checkStoredManifest(files, join(source, '_versions', 'none.manifest'), source, 'm')).resolves.toBeUndefined();
  });
});

describe('which references stay inside a table', () => {
  const local = '/warehouse/alpha/shop/t-0123456789ab.lance';
  const s3 = 's3://bucket/wh/alpha/shop/t-0123456789ab.lance';
  const reason = (m: Crafted, location = local) => {
    const reading = readManifestReferences({ bytes: manifestFile(m), offset: 0 });
    if (reading.kind !== 'manifest') throw new Error(reading.kind);
    return foreignReference(reading.references, location);
  };
  const onBase = (path: string, location = local) => reason({ fragments: [{ files: [{ path: 'f.lance', baseId: 0 }] }], basePaths: [{ id: 0, path }] }, location);

  it('lets through files of the table itself, and base paths inside it in every form Lance resolves', () => {
    expect(reason({ fragments: [{ files: [{ path: 'a.lance' }, { path: 'b.lance' }] }] })).toBeUndefined();
    expect(onBase(local)).toBeUndefined();
    expect(onBase(`${local}/tree/b1`)).toBeUndefined();
    expect(onBase(`${local}//tree/b1/`)).toBeUndefined();
    expect(onBase(`file://${local}/tree/b1`)).toBeUndefined();
    expect(onBase(`file://localhost${local}`)).toBeUndefined();
    expect(onBase(`file://${local}/tree/b1/../b2`)).toBeUndefined();
    expect(onBase(`${s3}/tree/b1`, s3)).toBeUndefined();
    expect(onBase(`${s3}/tree/../tree/b1`, s3)).toBeUndefined();
  });

  it('refuses base paths outside the table, however they are spelt', () => {
    for (const path of [
      '/warehouse/beta/vault/secret-0123456789ab.lance',
      '/warehouse/alpha/shop/t-0123456789ab.lance-other',
      '/warehouse/alpha/shop',
      `${local}/../t-other.lance`,
      `${local}/./tree`,
      `file://${local}/../../beta`,
      `file://${local}/%2e%2e/x`,
      `file://elsewhere${local}`,
      'relative/t.lance',
      '~/t.lance',
      '',
      `s3://bucket${local}`,
      `memory://${local}`,
      `${local}?x`,
      `${local}\\..\\x`,
    ]) {
      expect([path, onBase(path)]).toEqual([path, "its base path 0 lies outside this table's location"]);
    }
    for (const path of ['s3://other-bucket/wh/alpha/shop/t-0123456789ab.lance', 's3://bucket/wh/beta/t.lance', `${s3}/../../../beta`, 's3://user@bucket/wh/alpha/shop/t-0123456789ab.lance', 's3+ddb://bucket/wh/alpha/shop/t-0123456789ab.lance', local]) {
      expect([path, onBase(path, s3)]).toEqual([path, "its base path 0 lies outside this table's location"]);
    }
  });

  it('refuses a base path outside the table even when nothing names it', () => {
    expect(reason({ basePaths: [{ id: 3, path: '/warehouse/beta/x.lance' }] })).toBe("its base path 3 lies outside this table's location");
    expect(reason({ basePaths: [{ id: 3 }] })).toBe("its base path 3 lies outside this table's location");
  });

  it('refuses files, deletion files and indexes that name a base path the manifest does not declare', () => {
    expect(reason({ fragments: [{ files: [{ path: 'a.lance', baseId: 2 }] }] })).toBe('a data file names base path 2, which the manifest does not declare');
    expect(reason({ fragments: [{ files: [{ path: 'a.lance' }], deletionBaseId: 1 }] })).toBe('a deletion file names base path 1, which the manifest does not declare');
    expect(reason({ indexBaseIds: [4] })).toBe('an index names base path 4, which the manifest does not declare');
    expect(reason({ indexBaseIds: [0], basePaths: [{ id: 0, path: `${local}/tree/b1` }] })).toBeUndefined();
    expect(reason({ indexBaseIds: [0], basePaths: [{ id: 0, path: '/warehouse/beta/x.lance' }] })).toBe("its base path 0 lies outside this table's location");
  });

  it('refuses file paths that are absolute, have a scheme or climb out', () => {
    for (const path of ['/warehouse/beta/x.lance', '../../beta/x.lance', 'a/../../x', 's3://bucket/x.lance', 'file:///x', '..\\x']) {
      expect([path, reason({ fragments: [{ files: [{ path }] }] })]).toEqual([path, "a file path in it is absolute, has a scheme or climbs out with '..'"]);
    }
    expect(reason({ fragments: [{ files: [{ path: 'a.lance' }], externalRowIds: '../../beta/rowids' }] })).toBe(
      "a file path in it is absolute, has a scheme or climbs out with '..'",
    );
    expect(reason({ fragments: [{ files: [{ path: 'a..b.lance' }], externalRowIds: 'rows/ids.bin' }] })).toBeUndefined();
  });

  it('lets through a file that is no Lance manifest (Lance reads nothing from it), and refuses a damaged one', () => {
    expect(readManifestReferences({ bytes: Buffer.from('manifest 1'), offset: 0 })).toEqual({ kind: 'not-a-manifest' });
    expect(refusal(Buffer.from('manifest 1'), local)).toBeUndefined();
    expect(refusal(Buffer.alloc(0), local)).toBeUndefined();

    const good = manifestFile({ fragments: [{ files: [{ path: 'a.lance' }] }] });
    const truncatedMessage = Buffer.concat([good.subarray(0, good.length - 20), good.subarray(good.length - 16)]);
    const pastTheEnd = Buffer.from(good);
    pastTheEnd.writeBigInt64LE(BigInt(good.length), good.length - 16);
    const negative = Buffer.from(good);
    negative.writeBigInt64LE(-1n, good.length - 16);
    const garbage = Buffer.concat([Buffer.from([4, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]), good.subarray(good.length - 16)]);
    garbage.writeBigInt64LE(0n, garbage.length - 16);
    for (const bytes of [truncatedMessage, pastTheEnd, negative, garbage]) {
      expect(refusal(bytes, local)).toMatchObject({ code: ErrorCode.InvalidInput, message: "manifest 'm' is not a readable Lance manifest" });
    }
  });
});
