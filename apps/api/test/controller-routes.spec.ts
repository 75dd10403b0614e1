import 'reflect-metadata';
import { Controller, Get, Header, HttpCode, Post } from '@nestjs/common';
import Fastify, { FastifyRequest } from 'fastify';
import { bindControllerRoutes, routeUrl } from '../src/http/controller-routes';

@Controller('v1/things')
class ThingsController {
  @Get()
  list() {
    return { things: [] };
  }

  @Post(':id/create')
  created(req: FastifyRequest) {
    return { id: (req.params as { id: string }).id };
  }

  @Post(':id/describe')
  @HttpCode(200)
  async describe(req: FastifyRequest) {
    return { url: req.routeOptions.url };
  }

  @Post(':id/count')
  @HttpCode(200)
  @Header('content-type', 'application/json')
  count() {
    return 42;
  }

  @Post(':id/plan')
  @HttpCode(200)
  @Header('content-type', 'text/plain; charset=utf-8')
  plan() {
    return 'Scan';
  }

  @Get('thrown')
  thrown() {
    throw new Error('refused at once');
  }

  @Get('rejected')
  async rejected() {
    throw new Error('refused later');
  }

  /** Not a route: no method decorator. */
  helper() {
    return 'never served';
  }
}

@Controller()
class RootController {
  @Get('healthz')
  health() {
    return { status: 'ok' };
  }
}

describe('controller routes bound on Fastify', () => {
  const app = Fastify();
  app.setErrorHandler((error: Error, _request, reply) => void reply.code(418).send({ error: error.message }));
  bindControllerRoutes(app, [new ThingsController(), new RootController()]);

  afterAll(() => app.close());

  it('registers each decorated method at the path Nest would give it', () => {
    expect(routeUrl('v1/table', ':id/describe')).toBe('/v1/table/:id/describe');
    expect(routeUrl('', 'healthz')).toBe('/healthz');
    expect(routeUrl('metrics', '/')).toBe('/metrics');
    expect(routeUrl('/v1/table/', '')).toBe('/v1/table');
    expect(app.hasRoute({ method: 'GET', url: '/v1/things' })).toBe(true);
    expect(app.hasRoute({ method: 'GET', url: '/healthz' })).toBe(true);
    expect(app.hasRoute({ method: 'GET', url: '/v1/things/helper' })).toBe(false);
  });

  it("answers with Nest's default statuses, or the method's @HttpCode", async () => {
    const list = await app.inject({ method: 'GET', url: '/v1/things' });
    expect([list.statusCode, list.json()]).toEqual([200, { things: [] }]);
    const created = await app.inject({ method: 'POST', url: '/v1/things/a/create' });
    expect([created.statusCode, created.json()]).toEqual([201, { id: 'a' }]);
    const described = await app.inject({ method: 'POST', url: '/v1/things/a/describe' });
    expect([described.statusCode, described.json()]).toEqual([200, { url: '/v1/things/:id/describe' }]);
  });

  it('sets the @Header values: a bare number as JSON, a string as plain text', async () => {
    const count = await app.inject({ method: 'POST', url: '/v1/things/a/count' });
    expect(count.headers['content-type']).toMatch(/^application\/json/);
    expect(count.body).toBe('42');
    const plan = await app.inject({ method: 'POST', url: '/v1/things/a/plan' });
    expect([plan.headers['content-type'], plan.body]).toEqual(['text/plain; charset=utf-8', 'Scan']);
  });

  it("hands thrown and rejected errors to Fastify's error handler", async () => {
    const thrown = await app.inject({ method: 'GET', url: '/v1/things/thrown' });
    expect([thrown.statusCode, thrown.json()]).toEqual([418, { error: 'refused at once' }]);
    const rejected = await app.inject({ method: 'GET', url: '/v1/things/rejected' });
    expect([rejected.statusCode, rejected.json()]).toEqual([418, { error: 'refused later' }]);
  });
});
