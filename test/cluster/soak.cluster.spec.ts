import { FAULT_KINDS } from '../support/soak/nemesis';
import { runSoak } from '../support/soak/run';

/**
 * `npm run soak` for 40 s on a fixed seed (every kind of fault at least once): the cluster under load from every kind of client
 * while the seeded injector kills, restarts, stops and pauses each part at least once, NATS and
 * the webhook receiver among them. Nothing acknowledged is lost, every answer is a success, a
 * protocol refusal, or 503 code 17 with Retry-After, and every revision of the log reached both
 * change-feed sinks.
 */
describe('the cluster under load and faults (a short soak)', () => {
  it('loses nothing acknowledged and answers nothing unexpected through every kind of fault', async () => {
    const { result, report } = await runSoak({ seed: 20261125, seconds: 40, log: () => undefined });
    // The report names every problem; shown whole when an expectation below fails.
    const summary = { lost: result.lost, unexpected: result.unexpected, problems: result.problems.slice(0, 20) };
    expect({ ...summary, report }).toEqual({ lost: 0, unexpected: 0, problems: [], report });
    for (const kind of FAULT_KINDS) expect({ kind, injected: result.faultsByKind[kind] }).toEqual({ kind, injected: expect.any(Number) });
    expect(Math.min(...FAULT_KINDS.map((k) => result.faultsByKind[k]))).toBeGreaterThanOrEqual(1);
    expect(result.acknowledged).toBeGreaterThan(100);
    expect(result.feed.revisions).toBeGreaterThan(100);
    expect([result.feed.nats, result.feed.webhook]).toEqual([result.feed.revisions, result.feed.revisions]);
  }, 420_000);
});
