/** The packet fields of the panel: edit them and trace again. */
import type { PacketFields } from '../src/shared/protocol.ts';
import { button, dropdown, textField } from './controls.ts';

const PROTOCOLS = ['tcp', 'udp', 'sctp', 'icmp', 'icmpv6'];
const FROM = ['', 'outside', 'local'];
const STATES = ['', 'NEW', 'ESTABLISHED', 'RELATED', 'INVALID', 'UNTRACKED'];

export function packetForm(
  fields: PacketFields,
  onTrace: (f: PacketFields) => void,
  onSettings: () => void,
): HTMLElement {
  const form = document.createElement('form');
  form.className = 'packet-form';
  form.setAttribute('aria-label', 'Packet');
  const protocol = dropdown(
    'protocol',
    PROTOCOLS.includes(fields.protocol) ? PROTOCOLS : [fields.protocol, ...PROTOCOLS],
    fields.protocol,
  );
  const src = textField('source', fields.src, 'node itself');
  const sport = textField('source port', fields.sport, '40000');
  const dst = textField('destination', fields.dst, '10.96.0.10');
  const dport = textField('destination port', fields.dport, '80');
  const from = dropdown('from', FROM, fields.from === 'auto' ? '' : fields.from);
  const iface = textField('in', fields.in, 'uplink');
  const state = dropdown('state', STATES.includes(fields.state) ? STATES : [fields.state, ...STATES], fields.state);
  const mark = textField('mark', fields.mark, '0x0');
  const read = (): PacketFields => ({
    protocol: protocol.value(),
    src: src.value(),
    sport: sport.value(),
    dst: dst.value(),
    dport: dport.value(),
    from: (from.value() as PacketFields['from']) || '',
    in: iface.value(),
    state: state.value(),
    mark: mark.value(),
  });
  const row = document.createElement('div');
  row.className = 'fields';
  row.append(
    protocol.element,
    src.element,
    sport.element,
    dst.element,
    dport.element,
    from.element,
    iface.element,
    state.element,
    mark.element,
  );
  const actions = document.createElement('div');
  actions.className = 'actions';
  actions.append(
    button('Trace again', 'primary', () => onTrace(read())),
    button('Node settings…', 'secondary', onSettings),
  );
  form.append(row, actions);
  form.addEventListener('submit', e => {
    e.preventDefault();
    onTrace(read());
  });
  form.addEventListener('keydown', e => {
    if (e.key === 'Enter') {
      e.preventDefault();
      onTrace(read());
    }
  });
  return form;
}
