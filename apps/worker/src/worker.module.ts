import { BullModule } from '@nestjs/bullmq';
import { DynamicModule, Module } from '@nestjs/common';
import { AppConfig } from '@app/config';
import { QUEUES, redisConnection } from '@app/jobs';

/** The worker role: BullMQ processors only. Index builds and plan analysis arrive with the data plane. */
@Module({})
export class WorkerModule {
  static forConfig(config: AppConfig): DynamicModule {
    return {
      module: WorkerModule,
      imports: [
        BullModule.forRoot({ connection: redisConnection(config.redisUrl), prefix: config.queuePrefix }),
        BullModule.registerQueue({ name: QUEUES.maintenance }),
      ],
    };
  }
}
