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
});
