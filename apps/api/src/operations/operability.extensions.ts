import { servedDocumentOf } from '../openapi/served-document';
import { mount, rawOperation } from './operation';
import { readiness, scrapeMetrics } from './probes';

/** What runs the server needs beside the protocol: probes, metrics, the API's description, the queues. */
export const OPERABILITY_EXTENSIONS = [
  rawOperation({
    extension: 'Liveness',
    doc: { tag: 'Operations', summary: 'Liveness: 200 while the process runs.' },
    method: 'GET',
    path: '/healthz',
    access: 'public',
    serve: () => ({ status: 'ok' }),
  }),
  rawOperation({
    extension: 'Readiness',
    doc: { tag: 'Operations', summary: 'Readiness: 200 when the event store, Redis and the warehouse answer, 503 otherwise.' },
    method: 'GET',
    path: '/readyz',
    access: 'public',
    serve: (_request, _reply, s) => readiness(s),
  }),
  rawOperation({
    extension: 'Metrics',
    doc: { tag: 'Operations', summary: 'Prometheus metrics (text exposition format); with authentication configured it needs a credential for some database.' },
    method: 'GET',
    path: '/metrics',
    access: 'any-database',
    answer: 'prometheus',
    serve: (_request, _reply, s) => scrapeMetrics(s),
  }),
  rawOperation({
    extension: 'OpenApiDocument',
    doc: { tag: 'Operations', summary: 'This document.' },
    method: 'GET',
    path: '/openapi.json',
    access: 'public',
    serve: (_request, _reply, s) => servedDocumentOf(s.operations),
  }),
  // Plugins are loaded when mounted: the table itself (and the access policy reading it) stays light.
  mount({
    extension: 'ApiPage',
    prefix: '/docs',
    access: 'public',
    install: async (fastify, s) => (await import('../openapi/install-docs')).installDocs(fastify, '/docs', servedDocumentOf(s.operations)),
  }),
  mount({
    extension: 'QueueDashboard',
    prefix: '/admin/queues',
    access: 'admin-all',
    install: async (fastify, s) => (await import('../admin/install-queue-dashboard')).installQueueDashboard(fastify, '/admin/queues', s.queues),
  }),
];
