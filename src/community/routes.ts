// The community API's route: threads per channel, read by anyone, written by members.
import { errors, jsonContent, ref } from '../http/openapi.js';
import { defineRoutes } from '../slice/contract.js';
import { communityAction, communityActionResult, PAGE_LIMIT_DEFAULT, PAGE_LIMIT_MAX, threadList, threadWithComments } from './schema.js';

export const COMMUNITY_ROUTES = defineRoutes({
  apiCommunity: {
    hosts: ['site'],
    path: '/api/community',
    methods: ['GET', 'POST'],
    bodyLimit: 32 * 1024,
    forwardHeaders: ['authorization'],
    openapi: (kit) => {
      kit.component('ThreadList', threadList);
      kit.component('ThreadWithComments', threadWithComments);
      return {
        get: {
          tags: ['community'],
          summary: "List a channel's threads, or one thread with its comments",
          operationId: 'list_community',
          parameters: [
            {
              name: 'channel',
              in: 'query',
              required: true,
              schema: { type: 'string', minLength: 1, maxLength: 100, pattern: '\\S', example: 'dementia-and-alzheimers' },
              description: 'Channel slug (see /channels).',
            },
            {
              name: 'threadId',
              in: 'query',
              required: false,
              schema: { type: 'string', minLength: 1, maxLength: 64, pattern: '\\S' },
              description: 'Answer this thread with its comments instead of the list.',
            },
            { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT } },
            { name: 'cursor', in: 'query', required: false, schema: { type: 'string' }, description: 'nextCursor of the previous page.' },
          ],
          responses: {
            '200': {
              description: 'Threads, most recently active first (or a thread and its comments, oldest first).',
              content: jsonContent({ oneOf: [ref('ThreadList'), ref('ThreadWithComments')] }),
            },
            ...errors('BadRequest', 'NotFound', 'Internal'),
          },
        },
        post: {
          tags: ['community'],
          summary: 'Join, leave, start a thread or comment',
          description: `join and leave are idempotent; thread and comment need membership. Bodies are plain text, stored as written and rendered escaped. ${kit.config.rateCommunityWritesPerMin} writes a minute per user.`,
          operationId: 'community_action',
          security: [{ idToken: [] }],
          requestBody: { required: true, content: jsonContent(kit.component('CommunityAction', communityAction, 'input')) },
          responses: {
            '200': { description: 'What the action did.', content: jsonContent(kit.component('CommunityActionResult', communityActionResult)) },
            ...errors('BadRequest', 'Unauthorized', 'Forbidden', 'NotFound', 'PayloadTooLarge', 'UnsupportedMediaType', 'RateLimited', 'Internal'),
          },
        },
      };
    },
  },
});
