#!/usr/bin/env node
// The tables of Tests/bench/compare.sh: node table.js DIR RUNS "SCENARIO..." "SERVER..." reads
// DIR/SCENARIO-SERVER-N.json (pomo-bench --json reports, N = 1…RUNS; a missing one is a run that failed) and
// prints, in Markdown, per scenario the median of each figure over the runs with its range and ours/peer of
// the medians; then the summary of the two workloads (storm: 10k members in 1k rooms, allhands: 5,000 in one
// room) as the issue's table, with ratios.
'use strict';

const fs = require('fs');
const path = require('path');

const [dir, runsText, scenarioList, serverList] = process.argv.slice(2);
const runs = Number(runsText);
if (!dir || !(runs > 0)) {
  process.stderr.write('usage: table.js DIR RUNS "SCENARIO..." ["SERVER..."]\n');
  process.exit(64);
}
const scenarios = (scenarioList || 'rooms').split(/\s+/).filter(Boolean);
const servers = (serverList || 'ours peer').split(/\s+/).filter(Boolean);
const names = { before: 'ours before', ours: 'ours', peer: 'Node `ws` peer', gopeer: 'Go gorilla peer' };
const short = { before: 'before', ours: 'ours', peer: 'Node', gopeer: 'Go' };

function reports(scenario, server) {
  const found = [];
  for (let round = 1; round <= runs; round++) {
    const file = path.join(dir, `${scenario}-${server}-${round}.json`);
    if (fs.existsSync(file)) found.push(JSON.parse(fs.readFileSync(file, 'utf8')));
  }
  return found;
}

const perFrame = (r) => {
  const frames = r.traffic.framesPerSecond * r.setup.windowSeconds;
  return r.server && r.server.cpuSeconds !== undefined && frames > 0 ? r.server.cpuSeconds * 1e6 / frames : undefined;
};
// A stage's percentile; Infinity past the histogram's last bucket (the JSON has none then).
const stage = (name, q) => (r) => {
  const s = r.serverTickStages && r.serverTickStages[name];
  if (!s || !s.count) return undefined;
  return typeof s[q] === 'number' ? s[q] : Infinity;
};
const fmt = (v, places) => (v === Infinity ? 'beyond' : v.toFixed(places));

// Each figure from one report, or undefined when the report lacks it; `ratio` false for figures of the machine.
const figures = [
  ['tick delay p50 (ms)', (r) => r.ticks.delayMs && r.ticks.delayMs.p50, 2],
  ['tick delay p99 (ms)', (r) => r.ticks.delayMs && r.ticks.delayMs.p99, 2],
  ['probe members p99 (ms)', (r) => r.ticks.probeDelayMs && r.ticks.probeDelayMs.p99, 2],
  ['joined in (s)', (r) => (r.connections.joined === r.setup.members ? r.connections.joinSeconds : undefined), 2],
  ['server CPU over the joins (s)', (r) => (r.connections.joined === r.setup.members ? r.connections.joinServerCPUSeconds : undefined), 2],
  ['server CPU (% of a core)', (r) => r.server && r.server.cpuPercentOfCore, 1],
  ['server CPU per delivered frame (µs)', perFrame, 1],
  ['frames delivered (/s)', (r) => r.traffic.framesPerSecond, 0, false],
  ['server memory per connection (KiB)', (r) => r.server && r.server.rssBytesPerConnection !== undefined ? r.server.rssBytesPerConnection / 1024 : undefined, 1],
  ['server: timer woke, p50 / p99 (ms)', [stage('wakeup', 'p50Ms'), stage('wakeup', 'p99Ms')], 2, false],
  ['server: first write, p50 / p99 (ms)', [stage('first_write', 'p50Ms'), stage('first_write', 'p99Ms')], 2, false],
  ['server: last write, p50 / p99 (ms)', [stage('last_write', 'p50Ms'), stage('last_write', 'p99Ms')], 2, false],
  ['machine busy (% of all CPUs)', (r) => r.machineBusyPercent, 1, false],
];

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
}

function summary(values, places) {
  const present = values.filter((v) => typeof v === 'number' && !Number.isNaN(v));
  if (present.length === 0) return { text: '–' };
  const m = median(present);
  const text = present.length === 1 ? fmt(m, places)
    : `${fmt(m, places)} (${fmt(Math.min(...present), places)}–${fmt(Math.max(...present), places)})`;
  return { median: m, text };
}

function cell(list, read, places) {
  if (Array.isArray(read)) {
    const parts = read.map((each) => summary(list.map(each), places));
    return { text: parts.every((p) => p.median === undefined) ? '–' : parts.map((p) => p.median === undefined ? '–' : fmt(p.median, places)).join(' / ') };
  }
  return summary(list.map(read), places);
}

const peers = servers.filter((s) => s !== 'ours');
const all = {};
for (const scenario of scenarios) {
  all[scenario] = Object.fromEntries(servers.map((s) => [s, reports(scenario, s)]));
  const any = servers.map((s) => all[scenario][s][0]).find(Boolean);
  if (any) {
    const s = any.setup;
    console.log(`${s.scenario || 'pomo-bench'}: ${s.members} members in ${s.rooms} rooms, joining ${s.joinRate > 0 ? `${s.joinRate}/s` : 'all at once'}, ` +
      `focus ${s.focusSeconds} s, break ${s.breakSeconds} s, window ${s.windowSeconds} s; medians of ${runs} runs each, range in brackets`);
    console.log();
  }
  const hasOurs = servers.includes('ours');
  const ratioColumns = hasOurs ? peers.map((p) => `ours/${short[p] || p}`) : [];
  console.log(`| | ${servers.map((s) => names[s] || s).join(' | ')} | ${ratioColumns.join(' | ')} |`);
  console.log(`|---|${servers.map(() => '---').join('|')}|${ratioColumns.map(() => '---').join('|')}|`);
  for (const [label, read, places, ratio = true] of figures) {
    const cells = servers.map((s) => cell(all[scenario][s], read, places));
    const ours = cells[servers.indexOf('ours')];
    const ratios = !hasOurs ? [] : peers.map((p) => {
      const other = cells[servers.indexOf(p)];
      return ratio && ours.median !== undefined && other.median ? (ours.median / other.median).toFixed(2) : '';
    });
    console.log(`| ${label} | ${cells.map((c) => c.text).join(' | ')} | ${ratios.join(' | ')} |`);
  }
  const delivered = (list) => `${list.filter((r) => r.deliveryFailures.length === 0).length} of ${runs}`;
  console.log(`| runs with everything delivered | ${servers.map((s) => delivered(all[scenario][s])).join(' | ')} | ${ratioColumns.map(() => '').join(' | ')} |`);
  console.log();
}

// The summary: the issue's rows, medians only, with ours/peer.
// The workloads as run (sizes from the first report of each).
const size = (scenario) => {
  const first = all[scenario] && servers.map((s) => all[scenario][s][0]).find(Boolean);
  return first ? first.setup : { members: '?', rooms: '?' };
};
const count = (n) => (typeof n === 'number' ? n.toLocaleString('en-US') : n);
const rows = [
  ['storm', `${count(size('storm').members)} members / ${count(size('storm').rooms)} rooms: tick delay p50 (ms)`, (r) => r.ticks.delayMs && r.ticks.delayMs.p50, 2],
  ['storm', '… p99 (ms)', (r) => r.ticks.delayMs && r.ticks.delayMs.p99, 2],
  ['storm', '… CPU per delivered frame (µs)', perFrame, 1],
  ['storm', '… memory per connection (KiB)', (r) => r.server && r.server.rssBytesPerConnection !== undefined ? r.server.rssBytesPerConnection / 1024 : undefined, 1],
  ['storm', `… ${count(size('storm').members)} joins (s)`, (r) => (r.connections.joined === r.setup.members ? r.connections.joinSeconds : undefined), 2],
  ['storm', '… server CPU over the joins (s)', (r) => (r.connections.joined === r.setup.members ? r.connections.joinServerCPUSeconds : undefined), 2],
  ['allhands', `${count(size('allhands').members)} members in one room: tick delay p50 (ms)`, (r) => r.ticks.delayMs && r.ticks.delayMs.p50, 2],
  ['allhands', '… p99 (ms)', (r) => r.ticks.delayMs && r.ticks.delayMs.p99, 2],
];
if (scenarios.includes('storm') || scenarios.includes('allhands')) {
  const ratioColumns = servers.includes('ours') ? peers.map((p) => `ours/${short[p] || p}`) : [];
  console.log('Summary (medians; ratios of medians):');
  console.log();
  console.log(`| workload | ${servers.map((s) => names[s] || s).join(' | ')} | ${ratioColumns.join(' | ')} |`);
  console.log(`|---|${servers.map(() => '---').join('|')}|${ratioColumns.map(() => '---').join('|')}|`);
  for (const [scenario, label, read, places] of rows) {
    if (!all[scenario]) continue;
    const cells = servers.map((s) => summary(all[scenario][s].map(read), places));
    const ours = cells[servers.indexOf('ours')];
    const ratios = ratioColumns.length === 0 ? [] : peers.map((p) => {
      const other = cells[servers.indexOf(p)];
      return ours && ours.median !== undefined && other.median ? (ours.median / other.median).toFixed(2) : '–';
    });
    console.log(`| ${label} | ${cells.map((c) => c.text).join(' | ')} | ${ratios.join(' | ')} |`);
  }
}
