// The WebSocket address the page opens names the room in its query (docs/PROTOCOL.md, "Connecting"), for a
// proxy that sends a room's members to one cluster node.
//   node Tests/browser/socket_url.mjs

import assert from 'node:assert/strict';
import { roomSocketURL, socketURL } from '../../web/connection.js';

assert.equal(socketURL({ protocol: 'https:', host: 'focus.example.com' }), 'wss://focus.example.com/ws');
assert.equal(roomSocketURL('wss://focus.example.com/ws', 'team-alpha'), 'wss://focus.example.com/ws?room=team-alpha');
assert.equal(roomSocketURL('ws://127.0.0.1:8080/ws', 'Café Ü'), 'ws://127.0.0.1:8080/ws?room=Caf%C3%A9%20%C3%9C');
assert.equal(roomSocketURL('ws://h/ws?x=1', 'a&b'), 'ws://h/ws?x=1&room=a%26b');
assert.equal(roomSocketURL('ws://h/ws', null), 'ws://h/ws');
console.log('1 passed, 0 failed');
