/**
 * Export of the drawn graph: SVG (the panel's own drawing with the theme's colours written in, so the file
 * looks the same outside VS Code) and PNG (that SVG drawn on a canvas at twice the size). The webview has no
 * file system: the data goes to the extension, which asks where to save it.
 */

const PAINT = [
  'fill',
  'stroke',
  'stroke-width',
  'stroke-dasharray',
  'font-family',
  'font-size',
  'font-weight',
  'opacity',
];

/** A standalone copy of the drawing: computed colours and fonts as attributes, the background filled in. */
export function standaloneSvg(root: SVGSVGElement): string {
  const copy = root.cloneNode(true) as SVGSVGElement;
  const from = [root, ...root.querySelectorAll('*')];
  const to = [copy, ...copy.querySelectorAll('*')];
  from.forEach((el, i) => {
    const cs = getComputedStyle(el);
    const target = to[i]!;
    for (const p of PAINT) {
      const v = cs.getPropertyValue(p);
      if (v) target.setAttribute(p, v);
    }
    target.removeAttribute('tabindex');
    target.removeAttribute('class');
  });
  copy.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  const bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
  const vb = root.viewBox.baseVal;
  for (const [k, v] of Object.entries({ x: vb.x, y: vb.y, width: vb.width, height: vb.height }))
    bg.setAttribute(k, String(v));
  bg.setAttribute('fill', getComputedStyle(document.body).backgroundColor);
  copy.insertBefore(bg, copy.firstChild);
  return new XMLSerializer().serializeToString(copy);
}

/** The SVG rendered to PNG (base64, without the data: prefix), at `scale` times its size. */
export function pngOf(svgText: string, width: number, height: number, scale = 2): Promise<string> {
  return new Promise((resolve, reject) => {
    const url = URL.createObjectURL(new Blob([svgText], { type: 'image/svg+xml' }));
    const img = new Image();
    img.onload = () => {
      const canvas = document.createElement('canvas');
      canvas.width = Math.ceil(width * scale);
      canvas.height = Math.ceil(height * scale);
      const ctx = canvas.getContext('2d');
      if (!ctx) return reject(new Error('no canvas'));
      ctx.scale(scale, scale);
      ctx.drawImage(img, 0, 0, width, height);
      URL.revokeObjectURL(url);
      resolve(canvas.toDataURL('image/png').replace(/^data:image\/png;base64,/, ''));
    };
    img.onerror = () => {
      URL.revokeObjectURL(url);
      reject(new Error('the drawing could not be rendered'));
    };
    img.src = url;
  });
}
