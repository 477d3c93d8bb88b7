#!/usr/bin/env node
// The table of Tests/bench/compare.sh: node table.js DIR RUNS reads DIR/ours-N.json and DIR/peer-N.json
// (pomo-bench --json reports, N = 1…RUNS; a missing one is a run that failed) and prints, in Markdown, the
// median of each figure over the runs with its range, and ours/Node of the medians.
'use strict';

const fs = require('fs');
const path = require('path');

const [dir, runsText] = process.argv.slice(2);
const runs = Number(runsText);
if (!dir || !(runs > 0)) {
  process.stderr.write('usage: table.js DIR RUNS\n');
  process.exit(64);
}

function reports(server) {
  const found = [];
  for (let round = 1; round <= runs; round++) {
    const file = path.join(dir, `${server}-${round}.json`);
    if (fs.existsSync(file)) found.push(JSON.parse(fs.readFileSync(file, 'utf8')));
  }
  return found;
}

// Each figure from one report, or undefined when the report lacks it.
const figures = [
  ['tick delay p50 (ms)', (r) => r.ticks.delayMs && r.ticks.delayMs.p50, 2],
  ['tick delay p99 (ms)', (r) => r.ticks.delayMs && r.ticks.delayMs.p99, 2],
  ['probe members p99 (ms)', (r) => r.ticks.probeDelayMs && r.ticks.probeDelayMs.p99, 2],
  ['server CPU (% of a core)', (r) => r.server && r.server.cpuPercentOfCore, 1],
  ['server CPU per delivered frame (µs)', (r) => {
    const frames = r.traffic.framesPerSecond * r.setup.windowSeconds;
    return r.server && r.server.cpuSeconds !== undefined && frames > 0 ? r.server.cpuSeconds * 1e6 / frames : undefined;
  }, 1],
  ['frames delivered (/s)', (r) => r.traffic.framesPerSecond, 0],
  ['server memory per connection (KiB)', (r) => r.server && r.server.rssBytesPerConnection !== undefined ? r.server.rssBytesPerConnection / 1024 : undefined, 1],
  ['machine busy (% of all CPUs)', (r) => r.machineBusyPercent, 1],
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function summary(values, places) {
  const present = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  if (present.length === 0) return { text: '–' };
  const m = median(present);
  const text = present.length === 1 ? m.toFixed(places)
    : `${m.toFixed(places)} (${Math.min(...present).toFixed(places)}–${Math.max(...present).toFixed(places)})`;
  return { median: m, text };
}

const ours = reports('ours');
const peer = reports('peer');
const any = ours[0] || peer[0];
if (any) {
  const s = any.setup;
  console.log(`${s.scenario || 'pomo-bench'}: ${s.members} members in ${s.rooms} rooms, focus ${s.focusSeconds} s, ` +
    `break ${s.breakSeconds} s, window ${s.windowSeconds} s; medians of ${runs} runs each, range in brackets`);
  console.log();
}
console.log('| | ours | Node peer | ours/Node |');
console.log('|---|---|---|---|');
for (const [label, read, places] of figures) {
  const a = summary(ours.map(read), places);
  const b = summary(peer.map(read), places);
  const ratio = a.median !== undefined && b.median ? (a.median / b.median).toFixed(2) : '–';
  console.log(`| ${label} | ${a.text} | ${b.text} | ${label.startsWith('machine') || label.startsWith('frames') ? '' : ratio} |`);
}
const delivered = (list) => `${list.filter((r) => r.deliveryFailures.length === 0).length} of ${runs}`;
console.log(`| runs with everything delivered | ${delivered(ours)} | ${delivered(peer)} | |`);
