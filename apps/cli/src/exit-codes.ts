/** What the command's exit status says happened (README, "Operating the catalog"). */
export const EXIT = {
  /** Done, and nothing to report. */
  ok: 0,
  /** Done, with findings (verify) or a check that failed (migrate's digests). */
  findings: 1,
  /** The command line or the environment is wrong. */
  usage: 2,
  /** Refused before anything was written: the target event store is not empty. */
  notEmpty: 3,
  /** The archive is damaged or is not an export of this catalog: nothing was written. */
  badArchive: 4,
  /** A store, the warehouse or a file could not be read or written. */
  failed: 5,
} as const;

/** An ending the command explains in one line, with its exit status. */
export class CommandFailure extends Error {
  constructor(
    readonly exitCode: number,
    message: string,
  ) {
    super(message);
    this.name = 'CommandFailure';
  }
}
