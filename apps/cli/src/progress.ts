/**
 * A progress line on stderr, redrawn in place, only when stderr is a terminal and the output is not
 * for a script (--json): logs and pipes get the summary alone.
 */
export class Progress {
  private last = 0;
  private readonly enabled: boolean;

  constructor(
    private readonly label: string,
    private total?: number,
    quiet = false,
  ) {
    this.enabled = !quiet && process.stderr.isTTY === true;
  }

  setTotal(total: number): void {
    this.total = total;
  }

  update(done: number, note = ''): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (now - this.last < 100 && (this.total === undefined || done < this.total)) return;
    this.last = now;
    const width = 30;
    const bar =
      this.total && this.total > 0
        ? `[${'#'.repeat(Math.round((Math.min(done, this.total) / this.total) * width)).padEnd(width, '.')}] ${done}/${this.total}`
        : `${done}`;
    process.stderr.write(`\r\u001b[2K${this.label} ${bar}${note ? ` ${note}` : ''}`);
  }

  done(): void {
    if (this.enabled) process.stderr.write('\r\u001b[2K');
  }
}
