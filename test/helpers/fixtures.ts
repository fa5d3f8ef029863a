/** Shared test helpers: fixture paths, parsing with "no errors" asserted, and compact outcome views. */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Ruleset, type TraceOutcome, parseIptables } from '../../src/engine/api.ts';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const FIXTURES = join(ROOT, 'test', 'fixtures');

export function readFixture(...parts: string[]): string {
  return readFileSync(join(FIXTURES, ...parts), 'utf8');
}

export function parseClean(text: string, file = 'test.rules', allow: readonly string[] = []): Ruleset {
  const rs = parseIptables(text, { file });
  const errors = rs.diagnostics.filter(d => d.severity === 'error' && !allow.includes(d.code));
  assert.deepEqual(
    errors.map(d => `${d.range.start.line + 1}: ${d.code}: ${d.message}`),
    [],
    `${file} should parse without errors`,
  );
  return rs;
}

/** `table:chain#rule` for every matched rule, as the kernel oracle lists `probe_rule_hits`. */
export function hits(o: TraceOutcome): string[] {
  return o.steps.map(s => `${s.table}:${s.chain}#${s.rule}`);
}

const tempDirs: string[] = [];
process.on('exit', () => {
  for (const d of tempDirs) rmSync(d, { recursive: true, force: true });
});

/** Writes a file into a fresh temporary folder that is removed when the test process exits. */
export function tempFile(name: string, text: string, prefix = 'packetlens-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
}

/**
 * Manifests past the reader's budget (160,000 entries): Service `early`, then Deployments asking for
 * 100,000 replicas each (an entry per replica), then Service `late`. The second Deployment spends the
 * budget, so it and everything after it (from line 11) are not read.
 */
export function budgetSpendingManifests(deployments: readonly string[]): string {
  const deployment = (name: string) =>
    `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${name}}\nspec: {replicas: 100000, template: {metadata: {labels: {app: ${name}}}}}\n`;
  return [
    `apiVersion: v1\nkind: Service\nmetadata: {name: early}\nspec: {clusterIP: 10.96.0.20, ports: [{port: 80}]}\n`,
    ...deployments.map(deployment),
    `apiVersion: v1\nkind: Service\nmetadata: {name: late}\nspec: {clusterIP: 10.96.0.30, ports: [{port: 80}]}\n`,
  ].join('---\n');
}

/**
 * 80 KB whose product is past the cluster model's budget (300,000 endpoint-port pairs): Service `early`
 * (10.96.0.20:80, one endpoint), then Service `big` (line 13) of `ports` ports whose EndpointSlice (line 20)
 * holds `endpoints` endpoints for each, then Service `late` (10.96.0.30:80, one endpoint). The reader reads it
 * all (a few thousand entries); the model leaves out `big` and `late`.
 */
export function productManifests(ports = 1000, endpoints = 1000): string {
  const ip = (i: number) => `10.${1 + (i >> 16)}.${(i >> 8) & 255}.${i & 255}`;
  const slice = (name: string, service: string, portNames: string[], count: number) =>
    `apiVersion: discovery.k8s.io/v1\nkind: EndpointSlice\nmetadata: {name: ${name}, labels: {kubernetes.io/service-name: ${service}}}\naddressType: IPv4\nports: [${portNames.map((n, i) => `{name: ${n}, port: ${8000 + i}}`).join(', ')}]\nendpoints: [${Array.from({ length: count }, (_, i) => `{addresses: [${ip(i)}]}`).join(', ')}]\n`;
  const names = Array.from({ length: ports }, (_, i) => `p${i}`);
  return [
    `apiVersion: v1\nkind: Service\nmetadata: {name: early}\nspec: {clusterIP: 10.96.0.20, ports: [{name: web, port: 80}]}\n`,
    slice('early-1', 'early', ['web'], 1),
    `apiVersion: v1\nkind: Service\nmetadata: {name: big}\nspec:\n  clusterIP: 10.96.0.10\n  ports: [${names.map((n, i) => `{name: ${n}, port: ${1000 + i}}`).join(', ')}]\n`,
    slice('big-1', 'big', names, endpoints),
    `apiVersion: v1\nkind: Service\nmetadata: {name: late}\nspec: {clusterIP: 10.96.0.30, ports: [{name: web, port: 80}]}\n`,
    slice('late-1', 'late', ['web'], 1),
  ].join('---\n');
}
