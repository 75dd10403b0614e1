/**
 * Large buffers kept from one user to the next. Memory a process has not touched yet costs a page
 * fault per 4 KiB on its first write, and on a virtual machine whose freed pages go back to the
 * host that is most of the price of a large buffer: filling a fresh 2.6 MB one took about 8 ms
 * on a 2-vCPU VM, filling a reused one 0.2 ms.
 *
 * Whoever takes a buffer owns it until it gives it back, and must not touch it afterwards (nor let
 * anything else: the next taker writes over it). A buffer never given back is only garbage.
 */
export class BufferPool {
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;

  /**
   * @param maxBufferBytes buffers larger than this are not kept
   * @param maxKeptBytes at most this many bytes are kept in all
   * @param granule sizes are rounded up to a multiple of this, so one buffer serves bodies of nearly the same size
   */
  constructor(
    private readonly maxBufferBytes: number,
    private readonly maxKeptBytes: number,
    private readonly granule = 1,
  ) {}

  /** A buffer of at least `size` bytes (the smallest kept one that fits, or a new one); its content is left over. */
  take(size: number): Buffer {
    return this.takeKept(size) ?? Buffer.allocUnsafeSlow(Math.ceil(size / this.granule) * this.granule);
  }

  /** The smallest kept buffer of at least `size` bytes, if one is kept. */
  takeKept(size: number): Buffer | undefined {
    let best = -1;
    for (let i = 0; i < this.kept.length; i++) {
      if (this.kept[i].length >= size && (best < 0 || this.kept[i].length < this.kept[best].length)) best = i;
    }
    if (best < 0) return undefined;
    const [buffer] = this.kept.splice(best, 1);
    this.keptBytes -= buffer.length;
    return buffer;
  }

  /** Keeps `buffer` for a later `take`, dropping the smallest kept ones past the bound. */
  give(buffer: Buffer): void {
    if (buffer.length > this.maxBufferBytes || buffer.length > this.maxKeptBytes || this.kept.includes(buffer)) return;
    this.kept.push(buffer);
    this.keptBytes += buffer.length;
    while (this.keptBytes > this.maxKeptBytes) {
      let smallest = 0;
      for (let i = 1; i < this.kept.length; i++) if (this.kept[i].length < this.kept[smallest].length) smallest = i;
      this.keptBytes -= this.kept.splice(smallest, 1)[0].length;
    }
  }

  /** How many bytes are kept now. */
  get bytes(): number {
    return this.keptBytes;
  }
}
