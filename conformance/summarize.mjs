// Summarizes one conformance harness run from its `-o` directory and enforces what the harness
// does not: no scenario may pass with zero SUCCESS checks (the `initialize` scenario passes 0/0
// for a client that does nothing), and every baseline entry must name a scenario that ran.
//
// usage: node summarize.mjs RESULTS_DIR BASELINE_YML client|server LABEL
// Prints one line per scenario and a total; exits 1 on a violation.
import { readdirSync, readFileSync, statSync, existsSync } from 'node:fs';
import { join, relative } from 'node:path';

const [dir, baselinePath, side, label] = process.argv.slice(2);
if (!dir || !baselinePath || !side || !label) {
  console.error('usage: node summarize.mjs RESULTS_DIR BASELINE_YML client|server LABEL');
  process.exit(2);
}

// The baseline is a tiny YAML subset: `client:` / `server:` keys with `- name` items
// (comments and `[]` allowed); parsing it here keeps the summarizer dependency-free.
function baseline(path, key) {
  if (!existsSync(path)) return [];
  const names = [];
  let current = null;
  for (const raw of readFileSync(path, 'utf8').split('\n')) {
    const line = raw.replace(/#.*$/, '').trimEnd();
    if (!line.trim()) continue;
    const top = line.match(/^(\w+):\s*(\[\])?\s*$/);
    if (top) {
      current = top[1];
      continue;
    }
    const item = line.match(/^\s+-\s+(.+)$/);
    if (item && current === key) names.push(item[1].trim().replace(/^['"]|['"]$/g, ''));
  }
  return names;
}

function checkFiles(root) {
  const out = [];
  for (const entry of readdirSync(root)) {
    const path = join(root, entry);
    if (statSync(path).isDirectory()) out.push(...checkFiles(path));
    else if (entry === 'checks.json') out.push(path);
  }
  return out;
}

const scenarios = new Map();
for (const file of checkFiles(dir)) {
  // <dir>/[server-]<scenario>-<timestamp>/checks.json; auth scenarios nest one level deeper.
  let name = relative(dir, join(file, '..')).replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
  if (side === 'server') name = name.replace(/^server-/, '');
  const checks = JSON.parse(readFileSync(file, 'utf8'));
  const count = (s) => checks.filter((c) => c.status === s).length;
  scenarios.set(name, {
    success: count('SUCCESS'),
    failure: count('FAILURE'),
    warning: count('WARNING'),
  });
}

const expected = new Set(baseline(baselinePath, side));
const problems = [];
let passed = 0;
let checksPassed = 0;
let checksTotal = 0;
for (const [name, s] of [...scenarios].sort()) {
  const ok = s.failure === 0 && s.warning === 0;
  checksPassed += s.success;
  checksTotal += s.success + s.failure;
  if (ok) passed++;
  const mark = ok ? 'pass' : expected.has(name) ? 'FAIL (expected)' : 'FAIL';
  console.log(`  ${mark.padEnd(16)} ${name}: ${s.success}/${s.success + s.failure} checks${s.warning ? `, ${s.warning} warnings` : ''}`);
  if (ok && s.success === 0) problems.push(`${name} passed with zero checks`);
}
for (const name of expected) {
  if (!scenarios.has(name)) problems.push(`baseline entry ${name} names a scenario that did not run`);
}
console.log(`${label}: ${passed}/${scenarios.size} scenarios passed, ${checksPassed}/${checksTotal} checks`);
if (scenarios.size === 0) problems.push('no scenario results were written');
for (const p of problems) console.error(`${label}: ${p}`);
process.exit(problems.length ? 1 : 0);
