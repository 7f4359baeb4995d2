// The signed-in caller of a forwarded request (cc_session cookie), for any slice's handlers.
export { sessionCaller, type SessionCaller } from './sessions.js';
