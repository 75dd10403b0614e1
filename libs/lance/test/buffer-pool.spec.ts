import { BufferPool } from '../src/buffer-pool';

const MiB = 1024 * 1024;

describe('a pool of large buffers', () => {
  it('hands a buffer given back to the next taker it fits, the smallest that fits first', () => {
    const pool = new BufferPool(8 * MiB, 16 * MiB);
    const small = pool.take(MiB);
    const large = pool.take(4 * MiB);
    pool.give(large);
    pool.give(small);
    expect(pool.bytes).toBe(5 * MiB);
    expect(pool.take(MiB - 10)).toBe(small);
    expect(pool.take(2 * MiB)).toBe(large);
    expect(pool.bytes).toBe(0);
    // Nothing kept fits: a new one.
    const fresh = pool.take(3 * MiB);
    expect(fresh).not.toBe(small);
    expect(fresh).not.toBe(large);
  });

  it('rounds sizes up to its granule, so one buffer serves bodies of nearly the same size', () => {
    const pool = new BufferPool(8 * MiB, 16 * MiB, MiB);
    const first = pool.take(2_600_496);
    expect(first.length).toBe(3 * MiB);
    pool.give(first);
    expect(pool.take(2_600_100)).toBe(first);
  });

  it('keeps nothing larger than its buffer bound, and drops the smallest kept past its total bound', () => {
    const pool = new BufferPool(4 * MiB, 6 * MiB);
    pool.give(Buffer.alloc(5 * MiB));
    expect(pool.bytes).toBe(0);
    const one = Buffer.alloc(MiB);
    const three = Buffer.alloc(3 * MiB);
    const four = Buffer.alloc(4 * MiB);
    pool.give(one);
    pool.give(three);
    expect(pool.bytes).toBe(4 * MiB);
    pool.give(four);
    // 8 MiB past 6: the 1 MiB one goes, then the 3 MiB one.
    expect(pool.bytes).toBe(4 * MiB);
    expect(pool.take(1)).toBe(four);
  });

  it('hands out only kept buffers when asked for one, leaving the allocation to the caller', () => {
    const pool = new BufferPool(8 * MiB, 16 * MiB);
    expect(pool.takeKept(MiB)).toBeUndefined();
    const b = pool.take(2 * MiB);
    pool.give(b);
    expect(pool.takeKept(3 * MiB)).toBeUndefined();
    expect(pool.takeKept(MiB)).toBe(b);
    expect(pool.bytes).toBe(0);
  });

  it('keeps a buffer given back twice only once', () => {
    const pool = new BufferPool(4 * MiB, 8 * MiB);
    const b = pool.take(MiB);
    pool.give(b);
    pool.give(b);
    expect(pool.bytes).toBe(MiB);
    expect(pool.take(MiB)).toBe(b);
    expect(pool.take(MiB)).not.toBe(b);
  });
});
