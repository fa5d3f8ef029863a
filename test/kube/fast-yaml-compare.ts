/** Test helper: the `yaml` package's documents as plain values with ranges, to compare with fast-yaml's. */
import { isMap, isScalar, isSeq, parseAllDocuments, type Node } from 'yaml';
import type { FastNode } from '../../src/engine/kube/manifest/fast-yaml.ts';

export type Plain =
  | null
  | { v: unknown; r: [number, number] }
  | { m: [Plain, Plain][]; r: [number, number] }
  | { s: Plain[]; r: [number, number] }
  | { other: string };

function fromYaml(n: unknown): Plain {
  if (n === null || n === undefined) return null;
  const node = n as Node;
  const r: [number, number] = [node.range![0], node.range![1]];
  if (isScalar(node)) return { v: node.value, r };
  if (isMap(node)) return { m: node.items.map(p => [fromYaml(p.key), fromYaml(p.value)]), r };
  if (isSeq(node)) return { s: node.items.map(fromYaml), r };
  return { other: String((n as object).constructor?.name) };
}

export function fromFast(n: FastNode | null): Plain {
  if (n === null) return null;
  const r: [number, number] = [n.range[0], n.range[1]];
  if (n.fast === 'scalar') return { v: n.value, r };
  if (n.fast === 'map') return { m: n.items.map(p => [fromFast(p.key), fromFast(p.value)]), r };
  return { s: n.items.map(fromFast), r };
}

/** yaml's reading, or null when it reports errors (the fast reader must then give up). */
export function yamlDocs(text: string): Plain[] | null {
  const docs = parseAllDocuments(text, { prettyErrors: false, uniqueKeys: false, strict: false });
  const list = Array.isArray(docs) ? docs : [];
  if (list.some(d => d.errors.length)) return null;
  return list.map(d => fromYaml(d.contents));
}
