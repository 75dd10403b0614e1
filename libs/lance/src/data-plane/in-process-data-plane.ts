import { DataPlaneExecutor } from './data-plane-executor';
import { DataPlane, DataPlaneHooks, DataPlaneKind, DataPlaneOp, DataPlaneResult } from './data-plane-ops';

/** Data operations run in this process (`DATA_PLANE_PROCESSES=0`): a crash in Lance ends the process. */
export class InProcessDataPlane implements DataPlane {
  constructor(private readonly executor: DataPlaneExecutor) {}

  run<K extends DataPlaneKind>(op: Extract<DataPlaneOp, { kind: K }>, hooks?: DataPlaneHooks): Promise<DataPlaneResult<K>> {
    return this.executor.run(op, hooks);
  }

  /** The LanceTables it runs on belongs to the process, which closes it. */
  async close(): Promise<void> {}
}
