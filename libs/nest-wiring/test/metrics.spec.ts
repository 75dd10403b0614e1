import { Metrics } from '../src/metrics';

describe('Metrics', () => {
  it('counts requests from the latency histogram, also when scraped twice at once', async () => {
    const metrics = new Metrics();
    const labels = { operation: '/v1/table/:id/describe', method: 'POST', status: '200' };
    metrics.requestSeconds.observe(labels, 0.001);
    metrics.requestSeconds.observe(labels, 0.002);
    metrics.requestSeconds.observe({ ...labels, status: '404' }, 0.001);
    const line = (status: string, n: number) =>
      `lance_catalog_http_requests_total{operation="/v1/table/:id/describe",method="POST",status="${status}"} ${n}\n`;
    const scrapes = await Promise.all([metrics.registry.metrics(), metrics.registry.metrics(), metrics.registry.metrics()]);
    for (const text of scrapes) {
      expect(text).toContain(line('200', 2));
      expect(text).toContain(line('404', 1));
    }
  });

  it('sums the projection lag over databases, or names each when asked to', async () => {
    const lags: [string, number][] = [
      ['default', 2],
      ['sales', 3],
    ];
    const summed = new Metrics();
    summed.recordProjectionLag(lags);
    const text = await summed.registry.metrics();
    expect(text).toMatch(/^lance_catalog_projection_lag_events 5$/m);
    expect(text).not.toMatch(/database=/);
    const named = new Metrics({ databaseLabels: true });
    named.recordProjectionLag(lags);
    expect(await named.registry.metrics()).toMatch(/^lance_catalog_projection_lag_events\{database="sales"\} 3$/m);
  });
});
