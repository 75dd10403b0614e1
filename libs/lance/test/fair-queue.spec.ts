import { FairQueue } from '../src/data-plane/fair-queue';

describe('the data plane\'s fair queue', () => {
  const share = (database: string, principal = 'p') => ({ database, principal });

  it('serves the database served least recently first, whatever order they queued in', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 5; i++) q.add(share('alpha'), `a${i}`);
    q.add(share('beta'), 'b0');
    q.add(share('beta'), 'b1');
    const order = Array.from({ length: 7 }, () => q.take(() => true)!.item);
    expect(order).toEqual(['a0', 'b0', 'a1', 'b1', 'a2', 'a3', 'a4']);
    expect(q.size).toBe(0);
  });

  it('alternates between the principals of one database, each in its own order', () => {
    const q = new FairQueue<string>();
    for (let i = 0; i < 3; i++) q.add(share('alpha', 'greedy'), `g${i}`);
    q.add(share('alpha', 'modest'), 'm0');
    expect(Array.from({ length: 4 }, () => q.take(() => true)!.item)).toEqual(['g0', 'm0', 'g1', 'g2']);
  });

  it('counts what each principal of a database has waiting, and forgets one with nothing waiting', () => {
    const q = new FairQueue<string>();
    q.add(share('alpha', 'greedy'), 'g0');
    q.add(share('alpha', 'greedy'), 'g1');
    q.add(share('alpha', 'modest'), 'm0');
    expect([q.waitingOf(share('alpha', 'greedy')), q.waitingOf(share('alpha', 'modest')), q.principalsWaiting('alpha'), q.principalsWaiting('beta')]).toEqual([2, 1, 2, 0]);
    q.take(() => true);
    q.take(() => true);
    expect([q.waitingOf(share('alpha', 'greedy')), q.waitingOf(share('alpha', 'modest')), q.principalsWaiting('alpha')]).toEqual([1, 0, 1]);
  });

  it('passes over a database at its cap, and takes nothing when every waiting one is', () => {
    const q = new FairQueue<string>();
    q.add(share('alpha'), 'a0');
    q.add(share('beta'), 'b0');
    expect(q.take((d) => d !== 'alpha')!.item).toBe('b0');
    expect(q.take((d) => d !== 'alpha')).toBeUndefined();
    expect(q.waiting('alpha')).toBe(1);
    expect(q.take(() => true)!.item).toBe('a0');
  });

  it('forgets an item whose caller left, and a database with nothing waiting', () => {
    const q = new FairQueue<string>();
    q.add(share('alpha'), 'a0');
    q.add(share('alpha'), 'a1');
    expect(q.remove(share('alpha'), 'a0')).toBe(true);
    expect(q.remove(share('alpha'), 'a0')).toBe(false);
    expect(q.waiting('alpha')).toBe(1);
    expect(q.take(() => true)!.item).toBe('a1');
    expect(q.waiting('alpha')).toBe(0);
    expect(q.size).toBe(0);
  });
});
