// The page's default room names (web/roomname.js) under Node, without a browser: valid room ids, at least
// 64 random bits, every random bit used. test_room.py runs this when node is installed.
//   node Tests/browser/room_name.mjs

import assert from 'node:assert/strict';
import { webcrypto } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const R = await import(path.join(here, '../../web/roomname.js'));
const ROOM_ID = /^[A-Za-z0-9_-]{1,64}$/;
const secure = (bytes) => webcrypto.getRandomValues(bytes);

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check('at least 64 random bits', () => {
  assert.ok(R.ROOM_NAME_BITS >= 64, `${R.ROOM_NAME_BITS} bits`);
});

check('valid room ids, words then a suffix, no repeats in 20,000', () => {
  const seen = new Set();
  for (let i = 0; i < 20000; i += 1) {
    const name = R.randomRoomName(secure);
    assert.match(name, ROOM_ID);
    assert.match(name, /^[a-z]+-[a-z]+-[0-9a-hjkmnp-tv-z]{13}$/);
    seen.add(name);
  }
  assert.equal(seen.size, 20000);
});

check('the bytes asked for decide the name, each bit of them counted once', () => {
  // Count the bytes asked for, then flip every bit of them one at a time: each flip must change the name,
  // and the names must all differ, so the name is as random as the bits it claims.
  let size = 0;
  const zero = R.randomRoomName((bytes) => { size = bytes.length; bytes.fill(0); });
  const names = new Set();
  let changed = 0;
  for (let bit = 0; bit < size * 8; bit += 1) {
    const name = R.randomRoomName((bytes) => { bytes.fill(0); bytes[bit >> 3] = 1 << (bit & 7); });
    if (name === zero) continue;
    changed += 1;
    names.add(name);
  }
  assert.ok(changed >= R.ROOM_NAME_BITS, `${changed} of ${size * 8} bits change the name; ${R.ROOM_NAME_BITS} claimed`);
  assert.equal(names.size, changed, 'two bits gave the same name');
});

check('the secure source is the default', () => {
  const original = globalThis.crypto;
  let asked = 0;
  Object.defineProperty(globalThis, 'crypto', {
    value: { getRandomValues: (bytes) => { asked += bytes.length; return webcrypto.getRandomValues(bytes); } },
    configurable: true,
  });
  try {
    assert.match(R.randomRoomName(), ROOM_ID);
  } finally {
    Object.defineProperty(globalThis, 'crypto', { value: original, configurable: true });
  }
  assert.ok(asked * 8 >= R.ROOM_NAME_BITS);
});

let failed = 0;
for (const [name, fn] of checks) {
  try {
    fn();
    console.log(`ok ${name}`);
  } catch (error) {
    failed += 1;
    console.log(`not ok ${name}: ${error.message}`);
  }
}
console.log(`${checks.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
