// The hand check of JSON-RPC requests against the zod schema it stands in for.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRpcRequest, rpcRequest } from './envelope.js';

const anything = fc.oneof(
  fc.string({ maxLength: 6 }),
  fc.integer(),
  fc.double(),
  fc.constant(null),
  fc.constant(undefined),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.object({ maxDepth: 1 }),
);
const mostly = <T>(good: fc.Arbitrary<T>) => fc.oneof({ arbitrary: good, weight: 3 }, { arbitrary: anything, weight: 1 });
const message = fc.record(
  {
    jsonrpc: mostly(fc.constant('2.0')),
    id: mostly(fc.oneof(fc.integer(), fc.string({ maxLength: 4 }), fc.constant(null))),
    method: mostly(fc.constantFrom('tools/call', 'ping', '')),
    params: mostly(fc.object({ maxDepth: 1 })),
    extra: anything,
  },
  { requiredKeys: [] },
);

describe('parseRpcRequest', () => {
  it('agrees with the schema: the same verdict, and the same message when it accepts', () => {
    fc.assert(
      fc.property(fc.oneof(message, anything), (raw) => {
        const fast = parseRpcRequest(raw);
        const slow = rpcRequest.safeParse(raw);
        expect(fast.success).toBe(slow.success);
        if (fast.success) expect(fast.data).toEqual(slow.data);
      }),
      { numRuns: 3000 },
    );
  });
});
