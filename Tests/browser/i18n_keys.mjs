// The page's languages under Node (web/i18n.js): every language has every key with the same placeholders,
// every word the page asks for exists (index.html's data-i18n attributes, t('…') in the modules, the keys'
// help), every error code of docs/PROTOCOL.md §10 has its words, and the browser's language picks the right
// one. test_room.py runs this when node is installed.
//   node Tests/browser/i18n_keys.mjs

import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

const here = path.dirname(fileURLToPath(import.meta.url));
const webDir = path.join(here, '../../web');
const I = await import(path.join(webDir, 'i18n.js'));
const { KEY_HELP } = await import(path.join(webDir, 'keys.js'));
const { SOUNDS } = await import(path.join(webDir, 'alerts.js'));
const { EVENT_KINDS } = await import(path.join(webDir, 'roommodel.js'));
const dictionaries = I.dictionaries();
const english = dictionaries.en;

const checks = [];
const check = (name, fn) => checks.push([name, fn]);
const placeholders = (text) => [...text.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

check('the page speaks English, Simplified Chinese, Traditional Chinese and Korean', () => {
  assert.deepEqual([...I.LANGUAGES].sort(), ['en', 'ko', 'zh-Hans', 'zh-Hant']);
  assert.deepEqual(Object.keys(dictionaries).sort(), [...I.LANGUAGES].sort());
  const html = readFileSync(path.join(webDir, 'index.html'), 'utf8');
  for (const lang of I.LANGUAGES) assert.ok(html.includes(`<option value="${lang}"`), `no ${lang} in the picker`);
});

check('every language has every key (a `_one` form is English grammar, optional elsewhere)', () => {
  for (const [lang, words] of Object.entries(dictionaries)) {
    const missing = Object.keys(english).filter((k) => !(k in words) && !k.endsWith('_one'));
    assert.deepEqual(missing, [], `${lang} lacks ${missing.join(', ')}`);
    const extra = Object.keys(words).filter((k) => !(k in english));
    assert.deepEqual(extra, [], `${lang} has keys English does not: ${extra.join(', ')}`);
  }
});

check('every translation has the same placeholders as the English, and is not empty', () => {
  for (const [lang, words] of Object.entries(dictionaries)) {
    for (const [key, text] of Object.entries(words)) {
      assert.ok(typeof text === 'string' && text.trim() !== '', `${lang}.${key} is empty`);
      const base = english[key] ?? english[key.replace(/_one$/, '')];
      // A `_one` form says "1" in words, so it may leave out {n}.
      const ignore = (p) => key.endsWith('_one') && p === 'n';
      assert.deepEqual(placeholders(text).filter((p) => !ignore(p)), placeholders(base).filter((p) => !ignore(p)),
        `${lang}.${key}: ${text}`);
    }
  }
});

check('the Chinese of each script is its own: Simplified has no Traditional-only characters, and the reverse', () => {
  const traditionalOnly = /[們這個來會時間說關開點過還與網鐘設連線體]/;
  const simplifiedOnly = /[们这个来会时间说关开点过还与网钟设连线体]/;
  for (const [key, text] of Object.entries(dictionaries['zh-Hans'])) assert.ok(!traditionalOnly.test(text), `zh-Hans.${key}: ${text}`);
  for (const [key, text] of Object.entries(dictionaries['zh-Hant'])) assert.ok(!simplifiedOnly.test(text), `zh-Hant.${key}: ${text}`);
});

check('every word the page asks for exists: index.html, t() in every module, the keys\' help, sounds, events', () => {
  const wanted = new Set();
  const html = readFileSync(path.join(webDir, 'index.html'), 'utf8');
  for (const m of html.matchAll(/data-i18n(?:-aria|-title|-placeholder)?="([^"]+)"/g)) wanted.add(m[1]);
  for (const file of readdirSync(webDir).filter((f) => f.endsWith('.js'))) {
    const source = readFileSync(path.join(webDir, file), 'utf8');
    for (const m of source.matchAll(/\bt\('([A-Za-z_]+)'/g)) wanted.add(m[1]);
    for (const m of source.matchAll(/\bkey: '([A-Za-z_]+)'/g)) wanted.add(m[1]);
  }
  for (const { words } of KEY_HELP) wanted.add(words);
  for (const sound of SOUNDS) wanted.add(`sound_${sound}`);
  for (const phase of ['idle', 'focus', 'shortBreak', 'longBreak']) wanted.add(`phase_${phase}`);
  assert.ok(wanted.size > 150, `only ${wanted.size} keys found: the search is broken`);
  const missing = [...wanted].filter((k) => !(k in english));
  assert.deepEqual(missing, []);
  assert.ok(EVENT_KINDS.length > 0);
});

check('every error code in docs/PROTOCOL.md §10 has its words in every language', () => {
  const protocol = readFileSync(path.join(here, '../../docs/PROTOCOL.md'), 'utf8');
  const section = protocol.slice(protocol.indexOf('## 10. Error codes'), protocol.indexOf('\n## 11'));
  const codes = [...section.matchAll(/^\| `([a-z_]+)` \|/gm)].map((m) => m[1]).filter((c) => c !== 'code'); // not the header
  assert.ok(codes.length >= 15, `only ${codes.length} codes found in §10`);
  for (const [lang, words] of Object.entries(dictionaries)) {
    const missing = codes.filter((code) => !(`err_${code}` in words));
    assert.deepEqual(missing, [], `${lang} lacks words for ${missing.join(', ')}`);
  }
});

check('the browser\'s language decides: Chinese by script and region, else the first we have, else English', () => {
  const cases = [
    [['zh-CN'], 'zh-Hans'], [['zh'], 'zh-Hans'], [['zh-SG'], 'zh-Hans'], [['zh-Hans-CN'], 'zh-Hans'],
    [['zh-TW'], 'zh-Hant'], [['zh-HK'], 'zh-Hant'], [['zh-MO'], 'zh-Hant'], [['zh-Hant'], 'zh-Hant'], [['zh-Hant-HK'], 'zh-Hant'],
    [['ko-KR'], 'ko'], [['en-GB'], 'en'], [['fr-FR', 'ko'], 'ko'], [['fr-FR', 'de'], 'en'], [[], 'en'],
  ];
  for (const [languages, expected] of cases) assert.equal(I.detectLanguage(languages), expected, languages.join(','));
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
