// The installable page's files under Node: the service worker (web/sw.js) keeps every file of the page and
// nothing that is not there; the manifest (web/manifest.json) has what an install needs, and its icons exist
// with the sizes it gives them. test_room.py runs this when node is installed; it checks in Chromium that the
// manifest parses and the worker controls the page.
//   node Tests/browser/page_files.mjs

import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const webDir = path.join(here, '../../web');
const checks = [];
const check = (name, fn) => checks.push([name, fn]);

/** Every file under web/, as the server serves it ("/icons/icon.svg"). */
function served(dir = webDir, prefix = '') {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? served(full, `${prefix}/${name}`) : [`${prefix}/${name}`];
  });
}

/** The worker's list, read from its source (a classic worker script: no modules to import). */
function pageFiles() {
  const source = readFileSync(path.join(webDir, 'sw.js'), 'utf8');
  const list = source.slice(source.indexOf('const PAGE_FILES = ['), source.indexOf('];', source.indexOf('const PAGE_FILES')));
  return [...list.matchAll(/'([^']+)'/g)].map((m) => m[1]);
}

/** A PNG's width and height, from its IHDR chunk. */
function pngSize(file) {
  const bytes = readFileSync(file);
  assert.equal(bytes.toString('latin1', 1, 4), 'PNG', `${file} is not a PNG`);
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

const manifest = JSON.parse(readFileSync(path.join(webDir, 'manifest.json'), 'utf8'));

check('the worker keeps every file of the page, and only those', () => {
  const files = pageFiles();
  assert.equal(new Set(files).size, files.length, 'a file is listed twice');
  // The API's OpenAPI document lives in the web root to be served at /api/openapi.json; it is not the page's.
  const onDisk = served().filter((f) => f !== '/sw.js' && f !== '/openapi.json');
  assert.deepEqual([...files].sort(), [...onDisk].sort());
});

check('the worker is a classic script (no import or export) and leaves the API and WebSocket alone', () => {
  const source = readFileSync(path.join(webDir, 'sw.js'), 'utf8');
  assert.ok(!/^\s*(import|export)\s/m.test(source), 'sw.js uses module syntax');
  assert.match(source, /\/api\//);
  assert.match(source, /'\/ws'/);
  assert.match(source, /notificationclick/);
});

check('the manifest has a name, a start, a scope over /r/<room>, standalone display, colours and icons', () => {
  assert.equal(manifest.name, 'Pomodoro');
  assert.ok(manifest.short_name && manifest.short_name.length <= 12);
  assert.equal(manifest.start_url, '/');
  assert.equal(manifest.scope, '/');
  assert.equal(manifest.display, 'standalone');
  for (const colour of [manifest.theme_color, manifest.background_color]) assert.match(colour, /^#[0-9a-f]{6}$/);
  const html = readFileSync(path.join(webDir, 'index.html'), 'utf8');
  assert.match(html, /<link rel="manifest" href="\/manifest.json">/);
  assert.match(html, new RegExp(`<meta name="theme-color" content="${manifest.theme_color}">`));
});

check('the icons exist: SVG drawn, PNG at the sizes the manifest says, 192 and 512, maskable too', () => {
  const sizes = new Set();
  for (const icon of manifest.icons) {
    const file = path.join(webDir, icon.src);
    assert.ok(statSync(file).size > 0, icon.src);
    if (icon.type === 'image/png') {
      const [w, h] = pngSize(file);
      assert.equal(`${w}x${h}`, icon.sizes, icon.src);
      sizes.add(`${icon.purpose}:${icon.sizes}`);
    } else {
      assert.equal(icon.type, 'image/svg+xml');
      assert.match(readFileSync(file, 'utf8'), /^<svg [^>]*viewBox="0 0 512 512"/);
    }
  }
  for (const wanted of ['any:192x192', 'any:512x512', 'maskable:512x512']) assert.ok(sizes.has(wanted), wanted);
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
