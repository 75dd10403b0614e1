import { allocatorSettings } from '../src/data-plane/allocator-settings';

const MiB = 1024 * 1024;

describe("a data-plane process's allocator settings", () => {
  it('keep chunks up to 32 MiB on the heap and a quarter of the memory cap free, at most 256 MiB', () => {
    expect(allocatorSettings({}, 2048 * MiB)).toEqual({ MALLOC_MMAP_THRESHOLD_: String(32 * MiB), MALLOC_TRIM_THRESHOLD_: String(256 * MiB) });
    expect(allocatorSettings({}, 400 * MiB)).toEqual({ MALLOC_MMAP_THRESHOLD_: String(32 * MiB), MALLOC_TRIM_THRESHOLD_: String(100 * MiB) });
  });

  it("leave the environment's own settings as they are", () => {
    expect(allocatorSettings({ MALLOC_MMAP_THRESHOLD_: '131072' }, 2048 * MiB)).toEqual({ MALLOC_TRIM_THRESHOLD_: String(256 * MiB) });
    expect(allocatorSettings({ MALLOC_MMAP_THRESHOLD_: '131072', MALLOC_TRIM_THRESHOLD_: '0' }, 2048 * MiB)).toEqual({});
  });
});
