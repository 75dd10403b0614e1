import { Controller, Get, HttpCode, Inject } from '@nestjs/common';
import { CatalogError, ErrorCode } from '@app/catalog';
import { EventStore } from '@app/event-store';
import { EVENT_STORE } from '@app/core';

@Controller()
export class HealthController {
  constructor(@Inject(EVENT_STORE) private readonly store: EventStore) {}

  /** Alive: the process answers HTTP. */
  @Get('healthz')
  @HttpCode(200)
  healthz() {
    return { status: 'ok' };
  }

  /** Ready: the event store answers. */
  @Get('readyz')
  async readyz() {
    try {
      await this.store.ping();
    } catch (e) {
      throw new CatalogError(ErrorCode.ServiceUnavailable, 'not ready: the event store is unavailable', (e as Error).message);
    }
    return { status: 'ready', event_store: this.store.kind };
  }
}
