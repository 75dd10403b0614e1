import { CatalogError, ErrorCode } from '@app/catalog';
import { EventStore, LoadWord, OperatorWord, UnfinishedLoad, WRITE_FREEZE_POLL_MS, WriteFreeze, freezeOf, lastLoadWord, lastOperatorWord, loadLeftUnfinished } from '@app/event-store';

/**
 * Keeps this process's view of the operator's write freeze (see write-freeze.ts in the event store)
 * up to date, so the catalog writer can refuse appends while `lance-catalog migrate` makes its final
 * copy, or once the log has moved to another store. Until the store has answered once, appends are
 * refused (the store may hold what a load never finished); a store that cannot be read cannot be
 * appended to either, and the writer reports that on its own. A load found unfinished is handed to
 * `onUnfinishedLoad`: the process must not serve what it holds.
 */
export class WriteFreezeWatch {
  private freeze?: WriteFreeze;
  /** The operator's last event, and the last word on the store's loads, as last read: each read again only when its stream grows. */
  private word?: OperatorWord;
  private loadWord?: LoadWord;
  /** Whether the store has answered: before, nothing is known of a freeze or of a load. */
  private known = false;
  private readonly timer: NodeJS.Timeout;
  private polling = false;
  private answered!: () => void;
  /** Settles once the store has answered the watch (a process waits for it, a while, before it serves). */
  readonly firstRead = new Promise<void>((resolve) => (this.answered = resolve));

  constructor(
    private readonly store: EventStore,
    private readonly log: (message: string) => void = () => undefined,
    pollMs = WRITE_FREEZE_POLL_MS,
    private readonly onUnfinishedLoad: (load: UnfinishedLoad) => void = () => undefined,
  ) {
    this.timer = setInterval(() => void this.poll(), pollMs);
    this.timer.unref();
    void this.poll();
  }

  /** Whether the store has answered the watch: requests wait for it (the edge answers 503 before). */
  get ready(): boolean {
    return this.known;
  }

  /** The refusal to answer instead of appending, or undefined when appends may go on. */
  refusal(): CatalogError | undefined {
    if (!this.known) return new CatalogError(ErrorCode.ServiceUnavailable, 'the event store has not answered this server yet; retry shortly');
    const freeze = this.freeze;
    if (!freeze || (freeze.untilMillis !== undefined && freeze.untilMillis <= Date.now())) return undefined;
    return new CatalogError(
      ErrorCode.ServiceUnavailable,
      freeze.loading !== undefined
        ? `this event store is being loaded by lance-catalog ${freeze.loading.verb}, which has not finished; retry once it has`
        : freeze.movedTo === undefined
          ? 'writes are paused while an operator copies the catalog; retry shortly'
          : 'the catalog has moved to another event store; retry once this server runs on it',
    );
  }

  close(): void {
    clearInterval(this.timer);
  }

  private async poll(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      this.word = await lastOperatorWord(this.store, this.word);
      this.loadWord = await lastLoadWord(this.store, this.loadWord);
      const load = loadLeftUnfinished(this.loadWord);
      const freeze = load ? { reason: 'a load of the store did not finish', loading: load } : this.word && freezeOf(this.word.event, Date.now());
      if (freeze?.movedTo !== undefined && this.freeze?.movedTo === undefined) {
        this.log(`the event store was moved to ${freeze.movedTo}: writes are refused until this server is started with EVENT_STORE set to it`);
      } else if (freeze && !this.freeze && !load) this.log(`writes paused by an operator: ${freeze.reason}`);
      else if (!freeze && this.freeze) this.log('writes resumed');
      this.freeze = freeze;
      this.known = true;
      this.answered();
      if (load) this.onUnfinishedLoad(load);
    } catch {
      // Unreadable store: appends fail on their own.
    } finally {
      this.polling = false;
    }
  }
}
