import { Controller, HttpCode, Post, Req } from '@nestjs/common';
import {
  AlterTransactionAction,
  SET_PROPERTY_MODES,
  UNSET_PROPERTY_MODES,
  parseMode,
  parseTransactionStatus,
} from '@app/catalog';
import { TransactionService } from '@app/application';
import type { FastifyRequest } from 'fastify';
import { alterTransactionBody, oneOf, parseBody, plainBody } from '../http/body-schemas';
import { RestRequests } from '../http/rest-request.factory';

const ID = 3;

@Controller('v1/transaction')
export class TransactionController {
  constructor(
    private readonly rest: RestRequests,
    private readonly transactions: TransactionService,
  ) {}

  @Post(':id/describe')
  @HttpCode(200)
  describe(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(plainBody, r.body());
    const id = r.transactionId(ID);
    r.objectId(ID, body);
    return this.transactions.describeTransaction(r.context(body.context), id);
  }

  @Post(':id/alter')
  @HttpCode(200)
  alter(@Req() req: FastifyRequest) {
    const r = this.rest.of(req);
    const body = parseBody(alterTransactionBody, r.body());
    const id = r.transactionId(ID);
    r.objectId(ID, body);
    const actions: AlterTransactionAction[] = body.actions.map((a, i) => {
      switch (oneOf(a, ['setStatusAction', 'setPropertyAction', 'unsetPropertyAction'] as const, `actions[${i}]`)) {
        case 'setStatusAction':
          return { kind: 'setStatus', status: parseTransactionStatus(a.setStatusAction!.status) };
        case 'setPropertyAction': {
          const s = a.setPropertyAction!;
          return { kind: 'setProperty', key: s.key, value: s.value, mode: parseMode(s.mode, SET_PROPERTY_MODES, 'mode', 'Overwrite') };
        }
        case 'unsetPropertyAction': {
          const u = a.unsetPropertyAction!;
          return { kind: 'unsetProperty', key: u.key, mode: parseMode(u.mode, UNSET_PROPERTY_MODES, 'mode', 'Skip') };
        }
      }
    });
    return this.transactions.alterTransaction(r.context(body.context), id, actions);
  }
}
