import { CatalogError, CatalogEvent, CatalogState, CatalogView, ErrorCode } from '../src';
import { fold } from './support';

type Outcome = { events: CatalogEvent[] } | { error: unknown };

/**
 * One behaviour of a decide function, in the manner of Emmett's deciders:
 * `given(...history).when(decide).then(...events)`, `.thenMatch(...partial events)`,
 * `.thenFails(code)`, or `.thenState(check)` for what folding the decided events leaves.
 */
export function given(...history: CatalogEvent[]) {
  return {
    when(decide: (view: CatalogView) => CatalogEvent[]) {
      const state = fold(new CatalogState(), history);
      let outcome: Outcome;
      try {
        outcome = { events: decide(state) };
      } catch (error) {
        outcome = { error };
      }
      const decided = (): CatalogEvent[] => {
        if ('error' in outcome) throw outcome.error;
        return outcome.events;
      };
      return {
        then: (...events: CatalogEvent[]) => expect(decided()).toEqual(events),
        thenMatch: (...events: unknown[]) => expect(decided()).toMatchObject(events),
        thenState: (check: (state: CatalogState) => void) => check(fold(state, decided())),
        thenFails: (code: ErrorCode, message?: RegExp) => {
          const error = 'error' in outcome ? outcome.error : undefined;
          expect(error).toBeInstanceOf(CatalogError);
          expect({ code: (error as CatalogError).code, message: (error as CatalogError).message }).toEqual({ code, message: message ? expect.stringMatching(message) : expect.any(String) });
        },
      };
    },
  };
}
