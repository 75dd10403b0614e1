import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '@app/config';
import type { FastifyRequest } from 'fastify';
import { APP_CONFIG } from '@app/core';
import { RestRequest } from './rest-request';

@Injectable()
export class RestRequests {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  of(req: FastifyRequest): RestRequest {
    return new RestRequest(req, this.config.defaultDatabase);
  }
}
