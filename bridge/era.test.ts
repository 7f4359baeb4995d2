// The bridge sends a 2026-07-28 message with the routing headers its own body states.
import { describe, expect, it } from 'vitest';
import { decodeHeaderValue } from '../src/rpc/versions.js';
import { headerValue, routingHeaders } from './era.js';

describe('routing headers of a 2026-07-28 message', () => {
  const meta = { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } };

  it('when a message carries the envelope, then its version, method and name become headers the server accepts', () => {
    expect(routingHeaders({ params: { name: 'ping', ...meta } }, 'tools/call')).toEqual({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'ping',
    });
    expect(routingHeaders({ params: { uri: 'carecircle://loved-ones/x/timeline', ...meta } }, 'resources/read')?.['mcp-name']).toBe(
      'carecircle://loved-ones/x/timeline',
    );
    expect(routingHeaders({ params: meta }, 'tools/list')).toEqual({ 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list' });
  });

  it('when a message has no envelope, then it gets none (its version comes from initialize)', () => {
    expect(routingHeaders({ params: { name: 'ping' } }, 'tools/call')).toBeUndefined();
  });

  it('when a name is not plain visible ASCII, then it is base64-wrapped and decodes back to the same text', () => {
    for (const name of ['Café', ' padded ', 'line\nbreak']) expect(decodeHeaderValue(headerValue(name))).toBe(name);
    expect(headerValue('list_care_events')).toBe('list_care_events');
  });
});
