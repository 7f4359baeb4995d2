// The order test files are handed to the workers: the files that start several processes (which
// run one at a time, test/harness/oneDeploymentAtATime.ts) alternate with the others, so while one
// of them runs the other worker has something else to do.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

export const PROCESSES_PROJECT = 'processes';

export class DeploymentsApart extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const deployments = sorted.filter((f) => f.project.name === PROCESSES_PROJECT);
    const others = sorted.filter((f) => f.project.name !== PROCESSES_PROJECT);
    const order: TestSpecification[] = [];
    for (let i = 0; i < Math.max(deployments.length, others.length); i++) order.push(...(deployments[i] ? [deployments[i]!] : []), ...(others[i] ? [others[i]!] : []));
    return order;
  }
}
