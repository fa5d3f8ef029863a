/**
 * Every text and edge colour of the panels (webview/main.css: `color`, SVG `fill` and `stroke`) against the
 * background it is drawn on (the rule's own `background`, else the editor's), in VS Code's default themes:
 * at least 4.5:1 (WCAG 2.x AA for text; edges carry the graph's meaning, so they are held to the same), and
 * 3:1 for focus rings (WCAG 1.4.11, non-text). A colour the table below does not know fails the test: add its
 * values from the theme files first.
 *
 * Values: Default Dark Modern and Default Light Modern from microsoft/vscode
 * extensions/theme-defaults/themes/dark_modern.json (63d75127) and light_modern.json (dc70987b); a colour
 * those files do not set, and every colour of Dark High Contrast (hc_black.json sets only two selection
 * colours) and Light High Contrast (hc_light.json sets none of these), is the colour registry's default:
 * src/vs/platform/theme/common/colors/baseColors.ts (44036d19: foreground, errorForeground,
 * descriptionForeground = foreground at 70 %, focusBorder, textLink.foreground), editorColors.ts
 * (editor.background, editorError.foreground) and inputColors.ts (8259b1ec: input.*, button.*).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ROOT } from '../helpers/fixtures.ts';

type Theme = 'Dark Modern' | 'Light Modern' | 'Dark High Contrast' | 'Light High Contrast';
const THEMES: readonly Theme[] = ['Dark Modern', 'Light Modern', 'Dark High Contrast', 'Light High Contrast'];

/** [Dark Modern, Light Modern, Dark HC, Light HC]; null: the registry's null (transparent: the background shows). */
const COLOURS: Record<string, readonly (string | null)[]> = {
  'editor-background': ['#1F1F1F', '#FFFFFF', '#000000', '#FFFFFF'],
  foreground: ['#CCCCCC', '#3B3B3B', '#FFFFFF', '#292929'],
  descriptionForeground: ['#9D9D9D', '#3B3B3B', '#FFFFFFB3', '#292929B3'],
  'textLink-foreground': ['#40A6FF', '#005FB8', '#21A6FF', '#0F4A85'],
  'editorError-foreground': ['#F14C4C', '#E51400', '#F48771', '#B5200D'],
  focusBorder: ['#0078D4', '#005FB8', '#F38518', '#006BBD'],
  'input-background': ['#313131', '#FFFFFF', '#000000', '#FFFFFF'],
  'input-foreground': ['#CCCCCC', '#3B3B3B', '#FFFFFF', '#292929'],
  'button-background': ['#0078D4', '#005FB8', '#000000', '#0F4A85'],
  'button-hoverBackground': ['#026EC1', '#0258A8', '#000000', '#0F4A85'],
  'button-foreground': ['#FFFFFF', '#FFFFFF', '#FFFFFF', '#FFFFFF'],
  'button-secondaryBackground': ['#313131', '#E5E5E5', null, '#FFFFFF'],
  'button-secondaryHoverBackground': ['#3C3C3C', '#CCCCCC', null, null],
  'button-secondaryForeground': ['#CCCCCC', '#3B3B3B', '#FFFFFF', '#292929'],
};

type RGBA = [number, number, number, number];

function parse(hex: string): RGBA {
  const h = hex.slice(1);
  const n = (i: number) => parseInt(h.slice(i, i + 2), 16);
  return [n(0), n(2), n(4), h.length === 8 ? n(6) / 255 : 1];
}

/** A translucent colour as it shows over an opaque background. */
function over(fg: RGBA, bg: RGBA): RGBA {
  const a = fg[3];
  return [fg[0] * a + bg[0] * (1 - a), fg[1] * a + bg[1] * (1 - a), fg[2] * a + bg[2] * (1 - a), 1];
}

/** WCAG 2.x relative luminance and contrast ratio. */
function luminance([r, g, b]: RGBA): number {
  const lin = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

export function contrast(a: RGBA, b: RGBA): number {
  const [x, y] = [luminance(a), luminance(b)].sort((p, q) => q - p);
  return (x! + 0.05) / (y! + 0.05);
}

function colour(name: string, theme: Theme, editorBg: RGBA): RGBA {
  const v = COLOURS[name];
  assert.ok(v, `--vscode-${name} is used but its default theme values are not in this test's table`);
  const hex = v[THEMES.indexOf(theme)];
  return hex === null ? editorBg : over(parse(hex!), editorBg);
}

interface Use {
  readonly selector: string;
  readonly property: string;
  readonly colour: string;
  readonly background: string;
}

/** The colour declarations of a stylesheet (flat rules, as main.css is written). */
export function colourUses(css: string): Use[] {
  const uses: Use[] = [];
  const text = css.replace(/\/\*[\s\S]*?\*\//g, '');
  for (const m of text.matchAll(/([^{}]+)\{([^}]*)\}/g)) {
    const selector = m[1]!.trim();
    const decls = m[2]!;
    const bg = /(?:^|;|\s)background(?:-color)?:\s*var\(--vscode-([\w-]+)/.exec(decls)?.[1] ?? 'editor-background';
    for (const d of decls.matchAll(/(?:^|;|\s)(color|fill|stroke):\s*([^;]+)/g)) {
      const value = d[2]!.trim();
      if (value === 'none' || value === 'inherit' || value === 'transparent') continue;
      const v = /^var\(--vscode-([\w-]+)/.exec(value);
      assert.ok(v, `${selector} { ${d[1]}: ${value} }: colours come from the theme (--vscode-*)`);
      uses.push({ selector, property: d[1]!, colour: v[1]!, background: bg });
    }
  }
  return uses;
}

describe('panel colours have enough contrast in the default themes', () => {
  const css = readFileSync(join(ROOT, 'webview/main.css'), 'utf8');
  const uses = colourUses(css);

  it('finds the graph’s text, edge, NAT and error colours', () => {
    const has = (sel: RegExp, prop: string, c: string) =>
      uses.some(u => sel.test(u.selector) && u.property === prop && u.colour === c);
    assert.ok(has(/\.edge\.rewrite \.edge-line/, 'stroke', 'textLink-foreground'), 'NAT edges');
    assert.ok(has(/\.rewrite-text/, 'fill', 'textLink-foreground'), 'NAT labels');
    assert.ok(has(/\.edge\.error \.edge-line/, 'stroke', 'editorError-foreground'), 'edges into drops');
    assert.ok(has(/\.edge-line/, 'stroke', 'descriptionForeground'), 'edges');
    assert.ok(uses.length > 30, String(uses.length));
  });

  for (const theme of THEMES) {
    it(`${theme}: every text and edge colour ≥ 4.5:1, focus rings ≥ 3:1`, () => {
      const editorBg = parse(COLOURS['editor-background']![THEMES.indexOf(theme)]!);
      const low: string[] = [];
      for (const u of uses) {
        if (u.colour === u.background) continue; // a box filled with the background itself
        const bg = colour(u.background, theme, editorBg);
        const ratio = contrast(colour(u.colour, theme, bg), bg);
        const need = /:focus/.test(u.selector) && u.property === 'stroke' ? 3 : 4.5;
        if (ratio < need)
          low.push(`${u.selector} { ${u.property}: --vscode-${u.colour} } on ${u.background}: ${ratio.toFixed(2)}:1`);
      }
      assert.deepEqual(low, []);
    });
  }

  it('the colours the issue measured fail, as they should', () => {
    // charts.orange is rgba(234,92,0,0.33) in the default themes: 1.57:1 on Dark Modern, 1.5:1 on Light Modern.
    const orange: RGBA = [234, 92, 0, 0.33];
    const dark = parse('#1F1F1F');
    const light = parse('#FFFFFF');
    assert.ok(contrast(over(orange, dark), dark) < 1.7);
    assert.ok(contrast(over(orange, light), light) < 1.7);
    // Light Modern's errorForeground (#F85149) is too light for text on white: hence editorError.foreground.
    assert.ok(contrast(parse('#F85149'), light) < 4.5);
  });
});
