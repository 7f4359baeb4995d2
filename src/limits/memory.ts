// Exact token buckets in this process's memory: the limiter of a single-process run (the in-process
// bus), where no other process admits requests.
import { BucketStates, checkCost, decide, fullAt, type BucketPolicy, type Clock, type Limiter, type TakeResult } from './limiter.js';

interface State {
  last: number;
  refillMs: number;
  fullAt: number;
}

export class MemoryLimiter implements Limiter {
  private readonly states = new BucketStates<State>();

  constructor(private readonly clock: Clock = Date.now) {}

  async take(key: string, policy: BucketPolicy, cost = 1): Promise<TakeResult> {
    checkCost(cost);
    const now = this.clock();
    const state = this.states.get(key);
    // A state counted in another refill period (the policy changed) no longer applies.
    const d = decide(state?.refillMs === policy.refillMs ? state.last : undefined, policy, cost, now);
    if (d.allowed && d.last !== undefined) this.states.set(key, { last: d.last, refillMs: policy.refillMs, fullAt: fullAt(d.last, policy) }, now);
    return { allowed: d.allowed, remaining: d.remaining, retryAfterSec: d.retryAfterSec };
  }
}
