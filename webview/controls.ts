/**
 * The panels' form controls as plain HTML elements styled by the theme's --vscode-* variables (main.css).
 * They replace @vscode/webview-ui-toolkit, which Microsoft archived in January 2025: native inputs, selects
 * and buttons need no component library, work with the keyboard and screen readers as browsers make them,
 * and keep the strict CSP (no style element injected at run time).
 */

let fieldCount = 0;

/** A labelled text input; `value` reads the field. */
export function textField(
  label: string,
  value: string,
  placeholder: string,
): { element: HTMLElement; value: () => string } {
  const wrap = document.createElement('label');
  wrap.className = 'field';
  const caption = document.createElement('span');
  caption.textContent = label;
  const input = document.createElement('input');
  input.type = 'text';
  input.id = `field-${fieldCount++}`;
  input.placeholder = placeholder;
  input.value = value;
  input.spellcheck = false;
  wrap.append(caption, input);
  return { element: wrap, value: () => input.value };
}

/** A labelled drop-down of fixed choices. */
export function dropdown(
  label: string,
  choices: readonly string[],
  value: string,
): { element: HTMLElement; value: () => string } {
  const wrap = document.createElement('label');
  wrap.className = 'field dropdown';
  const caption = document.createElement('span');
  caption.textContent = label;
  const select = document.createElement('select');
  for (const c of choices) {
    const option = document.createElement('option');
    option.value = c;
    option.textContent = c === '' ? '(default)' : c;
    if (c === value) option.selected = true;
    select.append(option);
  }
  wrap.append(caption, select);
  return { element: wrap, value: () => select.value };
}

export function button(label: string, appearance: 'primary' | 'secondary', onClick: () => void): HTMLButtonElement {
  const b = document.createElement('button');
  b.type = 'button';
  b.className = `button ${appearance}`;
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}
