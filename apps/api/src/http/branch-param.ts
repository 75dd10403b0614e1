import { branchOf } from '@app/catalog';

/** A request's `branch` as a field to spread into a command: none when it names the main branch. */
export function branchField(branch: string | null | undefined): { branch?: string } {
  const named = branchOf(branch);
  return named === undefined ? {} : { branch: named };
}
