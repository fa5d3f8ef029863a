/**
 * Manifest diagnostics reach the Problems panel (src/vscode/manifest-diagnostics.ts, against a fake VS Code):
 * a Service with `port: "eighty"` — an error in the CLI — is an error on its line in the editor too, and a
 * fixed file is cleared.
 */
import './fake-vscode/register.ts';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { buildClusterModel, readManifests } from '../../src/engine/api.ts';
import { ManifestDiagnostics } from '../../src/vscode/manifest-diagnostics.ts';
import * as vscode from './fake-vscode/vscode.ts';

const FILE = 'file:///w/app/svc.yaml';
const service = (port: string) => `apiVersion: v1
kind: Service
metadata:
  name: web
spec:
  selector: {app: web}
  ports:
  - port: ${port}
`;
const model = (text: string) => buildClusterModel(readManifests([{ file: FILE, text }]));

describe('ManifestDiagnostics', () => {
  it("publishes the cluster model's problems on their files, and clears a file once fixed", () => {
    const md = new ManifestDiagnostics(() => 100);
    const collection = vscode.collections[vscode.collections.length - 1]!;
    md.publish('file:///w/app', [FILE], model(service('"eighty"')).diagnostics);
    const shown = collection.entries.get(FILE) ?? [];
    const port = shown.find(d => d.message.includes('eighty'));
    assert.ok(port, `no diagnostic about "eighty": ${shown.map(d => d.message).join('; ')}`);
    assert.equal(port.severity, vscode.DiagnosticSeverity.Error);
    assert.equal(port.range.start.line, 7);
    assert.equal(port.source, 'packetlens');
    md.publish('file:///w/app', [FILE], model(service('80')).diagnostics);
    assert.ok(
      !(collection.entries.get(FILE) ?? []).some(d => d.message.includes('eighty')),
      'the fixed file still shows the port error',
    );
    md.publish('file:///w/app', [], []);
    assert.equal(collection.entries.has(FILE), false, 'a file no longer in the cluster still shows problems');
    md.dispose();
  });

  it('caps the problems per file', () => {
    const md = new ManifestDiagnostics(() => 1);
    const collection = vscode.collections[vscode.collections.length - 1]!;
    md.publish('file:///w/app', [FILE], model(service('"eighty"')).diagnostics);
    assert.equal(collection.entries.get(FILE)?.length, 1);
    md.dispose();
  });
});
