/** Command identifiers, as contributed in package.json. */
export const COMMANDS = {
  tracePacket: 'packetlens.tracePacket',
  clearTrace: 'packetlens.clearTrace',
  showFlowDiagram: 'packetlens.showFlowDiagram',
  showKubeProxyRules: 'packetlens.showKubeProxyRules',
  /** A Service port's CodeLens: trace its packet end to end from the manifests (hidden from the palette). */
  traceFromManifests: 'packetlens.traceFromManifests',
  compareBehaviour: 'packetlens.compareBehaviour',
  /** A live capture from the node held against the active dump's prediction. */
  compareLiveTrace: 'packetlens.compareLiveTrace',
  /** The node context of the active dump: the status bar's Node item opens it. */
  setNode: 'packetlens.setNode',
  showLog: 'packetlens.showLog',
  /** The progress spinner's click: stop the running work. */
  cancelWork: 'packetlens.cancelWork',
  /** The walkthrough's example dumps (`dump` or `compare`). */
  openExample: 'packetlens.openExample',
} as const;

export const LANGUAGE_ID = 'iptables-save';
/** nftables rulesets (`nft list ruleset`, `nft -f` scripts, `nft -j` JSON): the same features, nft-aware. */
export const NFT_LANGUAGE_ID = 'nftables';
/** Every language whose documents are rulesets the dump store parses. */
export const RULESET_LANGUAGES: readonly string[] = [LANGUAGE_ID, NFT_LANGUAGE_ID];
export const YAML_LANGUAGE_ID = 'yaml';
export const VIEW_TYPE = 'packetlens.flow';
export const DIFF_VIEW_TYPE = 'packetlens.diff';
export const HISTORY_KEY = 'packetlens.packetHistory';
/** Context key: the active editor holds Kubernetes manifests (menus show Trace Packet… on it). */
export const KUBERNETES_CONTEXT = 'packetlens.kubernetesDocument';
