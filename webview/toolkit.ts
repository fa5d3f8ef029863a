/**
 * The one module that uses @vscode/webview-ui-toolkit (the user's chosen component set; archived
 * upstream, so everything else goes through these helpers and replacing it is a one-file change).
 */
import {
  provideVSCodeDesignSystem,
  vsCodeButton,
  vsCodeDropdown,
  vsCodeOption,
  vsCodeTextField,
} from '@vscode/webview-ui-toolkit';

let registered = false;

export function registerToolkit(): void {
  if (registered) return;
  registered = true;
  provideVSCodeDesignSystem().register(vsCodeButton(), vsCodeDropdown(), vsCodeOption(), vsCodeTextField());
}

/** A labelled text input; `value` reads and writes the field. */
export function textField(
  label: string,
  value: string,
  placeholder: string,
): { element: HTMLElement; value: () => string } {
  const field = document.createElement('vscode-text-field') as HTMLElement & { value: string };
  field.setAttribute('placeholder', placeholder);
  field.textContent = label;
  field.value = value;
  return { element: field, value: () => field.value };
}

/** A labelled drop-down of fixed choices. */
export function dropdown(
  label: string,
  choices: readonly string[],
  value: string,
): { element: HTMLElement; value: () => string } {
  const wrap = document.createElement('label');
  wrap.className = 'dropdown';
  const caption = document.createElement('span');
  caption.textContent = label;
  const select = document.createElement('vscode-dropdown') as HTMLElement & { value: string };
  for (const c of choices) {
    const option = document.createElement('vscode-option') as HTMLElement & { value: string };
    option.value = c;
    option.textContent = c === '' ? '(default)' : c;
    if (c === value) option.setAttribute('selected', '');
    select.appendChild(option);
  }
  wrap.append(caption, select);
  return { element: wrap, value: () => select.value };
}

export function button(label: string, appearance: 'primary' | 'secondary', onClick: () => void): HTMLElement {
  const b = document.createElement('vscode-button');
  b.setAttribute('appearance', appearance);
  b.textContent = label;
  b.addEventListener('click', onClick);
  return b;
}
