// The page's limits (web/limits.js) under Node, against the golden `welcome` the Swift tests pin
// (Tests/fixtures/wire/server/welcome.json): what a server sends is what the page checks.
//   node Tests/browser/limits_model.mjs

import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const L = await import(path.join(here, '../../web/limits.js'));
const welcome = JSON.parse(readFileSync(path.join(here, '../fixtures/wire/server/welcome.json'), 'utf8'));

const checks = [];
const check = (name, fn) => checks.push([name, fn]);

check('the golden welcome carries every limit the page knows, and the page takes each', () => {
  assert.equal(welcome.type, 'welcome');
  assert.deepEqual(Object.keys(welcome.limits).sort(), Object.keys(L.DEFAULT_LIMITS).sort());
  assert.deepEqual({ ...L.limitsFrom(welcome.limits) }, welcome.limits);
});

check('an operator\'s limits replace the defaults', () => {
  const limits = L.limitsFrom({ ...welcome.limits, maxTaskLength: 12, minFocusSeconds: 300, maxNameLength: 8 });
  assert.equal(limits.maxTaskLength, 12);
  assert.equal(limits.maxNameLength, 8);
  assert.equal(L.minSettingSeconds(limits, 'focus'), 300);
  assert.equal(L.minSettingSeconds(limits, 'break'), 1);
});

check('an older server without limits, or nonsense, leaves the defaults', () => {
  assert.equal(L.limitsFrom(undefined).maxTaskLength, L.DEFAULT_LIMITS.maxTaskLength);
  const odd = L.limitsFrom({ maxTaskLength: 'ten', maxNameLength: -1, minPasscodeLength: 2.5, maxPasscodeLength: null });
  assert.deepEqual({ ...odd }, { ...L.DEFAULT_LIMITS });
});

check('limits kept as text come back, and broken text gives the defaults', () => {
  const kept = JSON.stringify(L.limitsFrom({ maxTaskLength: 50 }));
  assert.equal(L.limitsFromText(kept).maxTaskLength, 50);
  assert.equal(L.limitsFromText('{not json').maxTaskLength, L.DEFAULT_LIMITS.maxTaskLength);
  assert.equal(L.limitsFromText(null), L.DEFAULT_LIMITS);
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
