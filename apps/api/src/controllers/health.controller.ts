import { Controller, Get, HttpCode, Inject } from '@nestjs/common';
import { CatalogError, ErrorCode } from '@app/catalog';
import { EventStore } from '@app/event-store';
import { BullIndexQueue, CREDENTIAL_VENDING, EVENT_STORE } from '@app/core';
import { CredentialVending, Warehouse } from '@app/storage';

@Controller()
export class HealthController {
  constructor(
    @Inject(EVENT_STORE) private readonly store: EventStore,
    private readonly warehouse: Warehouse,
    private readonly queue: BullIndexQueue,
    @Inject(CREDENTIAL_VENDING) private readonly vending: CredentialVending,
  ) {}

  /** Alive: the process answers HTTP. */
  @Get('healthz')
  @HttpCode(200)
  healthz() {
    return { status: 'ok' };
  }

  /**
   * Ready: the event store, Redis and the warehouse all answer, and so does the service client
   * credentials are vended by (STS), when there is one. Each check is reported.
   */
  @Get('readyz')
  async readyz() {
    const checks: Record<string, string> = {
      event_store: await this.store.ping().then(() => 'ok', (e: Error) => `unavailable: ${e.message}`),
      redis: await this.queue.ping().then(() => 'ok', (e: Error) => `unavailable: ${e.message}`),
      warehouse: await this.warehouse.ping().then(() => 'ok', (e: Error) => `unavailable: ${this.warehouse.root}: ${e.message}`),
    };
    const vendedBy = this.vending.dependency;
    if (vendedBy) checks[vendedBy.name] = await vendedBy.ping().then(() => 'ok', (e: Error) => `unavailable: ${e.message}`);
    const failing = Object.entries(checks).filter(([, v]) => v !== 'ok');
    if (failing.length) {
      throw new CatalogError(ErrorCode.ServiceUnavailable, `not ready: ${failing.map(([k]) => k).join(', ')} unavailable`, JSON.stringify(checks));
    }
    return { status: 'ready', event_store: this.store.kind, checks };
  }
}
