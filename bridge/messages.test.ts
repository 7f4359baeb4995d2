import { describe, expect, it } from 'vitest';
import { classify, idFromHead, idFromTail, recoverId } from './messages.js';

describe('bridge messages - classify', () => {
  it('when a message has a method and an id, then it is a request expecting that id', () => {
    expect(classify({ jsonrpc: '2.0', id: 7, method: 'tools/list' })).toMatchObject({ kind: 'request', id: 7, method: 'tools/list' });
    expect(classify({ jsonrpc: '2.0', id: null, method: 'ping' })).toMatchObject({ kind: 'request', id: null });
  });

  it('when a message has no id, then it is a notification', () => {
    expect(classify({ jsonrpc: '2.0', method: 'notifications/initialized' })).toMatchObject({ kind: 'notification' });
  });

  it('when a client sends a response, then it is recognised (and not answered)', () => {
    expect(classify({ jsonrpc: '2.0', id: 3, result: {} })).toEqual({ kind: 'response', id: 3 });
  });

  it('when the envelope is wrong, then it is invalid with whatever id could be salvaged', () => {
    expect(classify(42)).toMatchObject({ kind: 'invalid', id: null });
    expect(classify({ jsonrpc: '2.0', id: 6 })).toMatchObject({ kind: 'invalid', id: 6, reason: expect.stringMatching(/method/) });
    expect(classify({ jsonrpc: '1.0', id: 'x', method: 'ping' })).toMatchObject({ kind: 'invalid', id: 'x', reason: expect.stringMatching(/2\.0/) });
    expect(classify({ jsonrpc: '2.0', id: { no: 1 }, method: 'ping' })).toMatchObject({ kind: 'invalid', id: null });
  });
});

describe('bridge messages - recovering the id of a broken line', () => {
  it('when a truncated line starts with the envelope, then its top-level id is read from the head', () => {
    expect(idFromHead('{"jsonrpc":"2.0","id":7,"method":"pi')).toBe(7);
    expect(idFromHead('{"method":"x","params":{"id":3,"s":"}{\\""},"id":"abc","jsonrpc":')).toBe('abc');
  });

  it('when the only "id" in the head is nested, then no id is claimed', () => {
    expect(idFromHead('{"method":"tools/call","params":{"arguments":{"id":3')).toBeUndefined();
    expect(idFromHead('not json at all')).toBeUndefined();
  });

  it('when a head ends inside a number, then it is not trusted unless the head is the whole line', () => {
    expect(idFromHead('{"id":12')).toBeUndefined();
    expect(idFromHead('{"id":12', true)).toBe(12);
  });

  it('when an oversized line ends the way SDK clients write it, then the id is read from the tail', () => {
    expect(idFromTail('…"}}},"jsonrpc":"2.0","id":42}')).toBe(42);
    expect(idFromTail('…"}},"id":"r-9","jsonrpc":"2.0"}')).toBe('r-9');
  });

  it('when the tail ends in a nested object, then no id is claimed', () => {
    expect(idFromTail('"params":{"jsonrpc":"2.0","id":9}}')).toBeUndefined();
    expect(recoverId('xxxx', '"params":{"x":{"jsonrpc":"2.0","id":9}}')).toBeUndefined();
  });
});
