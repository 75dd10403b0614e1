import { FastifyAdapter } from '@nestjs/platform-fastify';
import Fastify, { FastifyInstance, FastifyServerOptions } from 'fastify';

/**
 * NestJS's Fastify adapter on a Fastify instance of the server's own, without the seven hooks
 * the adapter's constructor adds to every request (Nest middleware, CORS, CSRF and security
 * headers, versioning, lifecycle hooks, its own 503 while closing). None of those features is
 * used here (the edge binds Fastify routes itself, operations/bind-operations.ts, and drains on
 * its own, bootstrap.ts), and each hook was a call and a callback on every request: about 2 µs of
 * the 35 a catalog read costs. The adapter is built on a view of the instance that takes no hooks,
 * then pointed at the instance itself.
 */
export function leanFastifyAdapter(options: FastifyServerOptions): FastifyAdapter {
  const instance = Fastify(options) as unknown as FastifyInstance;
  const hookless = new Proxy(instance, {
    get(target, property, receiver) {
      if (property === 'addHook') return () => receiver;
      // No Nest middleware is used: middie is never registered, and no request runs its chain.
      if (property === 'skipMiddie') return true;
      return Reflect.get(target, property, target);
    },
  });
  const adapter = new FastifyAdapter(hookless as never);
  adapter.setInstance(instance);
  return adapter;
}
