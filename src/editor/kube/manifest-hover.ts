/** The hover at a position of a Kubernetes manifest: a Service, one of its fields, or one of its ports. */
import type { Range } from '../../engine/api.ts';
import type { LineSource } from '../text-lines.ts';
import type { ClusterView } from './cluster.ts';
import { fieldHover } from './field-hover.ts';
import { targetAt } from './positions.ts';
import { portHover, serviceHover } from './service-hover.ts';

export interface ManifestHover {
  readonly markdown: string;
  readonly range: Range;
}

export function manifestHoverAt(
  view: ClusterView,
  file: string,
  lines: LineSource,
  line: number,
  character: number,
): ManifestHover | null {
  const at = targetAt(view, file, lines, line, character);
  if (!at) return null;
  const t = at.target;
  const markdown =
    t.kind === 'service'
      ? serviceHover(view, t.service)
      : t.kind === 'field'
        ? fieldHover(view, t.service, t.field)
        : portHover(view, t.service, t.port);
  return { markdown, range: at.range };
}
