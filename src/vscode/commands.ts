/** Command identifiers, as contributed in package.json. */
export const COMMANDS = {
  tracePacket: 'packetlens.tracePacket',
  clearTrace: 'packetlens.clearTrace',
  showFlowDiagram: 'packetlens.showFlowDiagram',
  showKubeProxyRules: 'packetlens.showKubeProxyRules',
} as const;

export const LANGUAGE_ID = 'iptables-save';
export const VIEW_TYPE = 'packetlens.flow';
export const HISTORY_KEY = 'packetlens.packetHistory';
