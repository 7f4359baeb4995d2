// The keys slice: MCP API keys; its collection's indexes (the pages and checks live in app and workspace).
import { defineSlice } from '../slice/contract.js';
import { API_KEY_INDEXES, API_KEYS } from './keys.js';

export const keysSlice = defineSlice({ name: 'keys', indexes: { [API_KEYS]: API_KEY_INDEXES } });
