/**
 * What works on a big dump and what does not, in the user's words. VS Code itself limits large files:
 * above 20 MB or 300,000 lines it treats a document as "too large for tokenization" and turns off syntax
 * colouring, CodeLens, folding and sticky scroll for it (unless `editor.largeFileOptimizations` is off),
 * and above 50 MB it does not hand the document to extensions at all, so the commands read such a file
 * from disk and the in-editor features are unavailable.
 */
export const TOKENIZATION_LIMIT_BYTES = 20 * 1024 * 1024;
export const TOKENIZATION_LIMIT_LINES = 300_000;
export const EXTENSION_SYNC_LIMIT_BYTES = 50 * 1024 * 1024;

export interface FileSize {
  readonly bytes: number;
  readonly lines: number | null;
}

function mb(bytes: number): string {
  return `${(bytes / 1048576).toFixed(1)} MB`;
}

/** Why VS Code does not colour the file, or null. */
export function tokenizationNote(size: FileSize): string | null {
  if (size.bytes > TOKENIZATION_LIMIT_BYTES || (size.lines !== null && size.lines > TOKENIZATION_LIMIT_LINES)) {
    const what =
      size.bytes > TOKENIZATION_LIMIT_BYTES ? mb(size.bytes) : `${size.lines!.toLocaleString('en-US')} lines`;
    return `No syntax colouring, CodeLens or folding: VS Code turns them off for files above 20 MB or 300,000 lines (this one: ${what}). Set "editor.largeFileOptimizations": false to have them anyway. Hovers, outline, go to definition, diagnostics, tracing and line highlights still work.`;
  }
  return null;
}

/** The message when a file was read from disk because VS Code did not give the document to extensions. */
export function readFromDiskNote(name: string, bytes: number): string {
  const why =
    bytes > EXTENSION_SYNC_LIMIT_BYTES
      ? `${name} is ${mb(bytes)}: VS Code does not hand files above 50 MB to extensions`
      : `${name} (${mb(bytes)}) is not open as a document (VS Code asks before opening very large files: "Open Anyway")`;
  const what = bytes > EXTENSION_SYNC_LIMIT_BYTES ? 'are not available for it' : 'need it open in the editor';
  return `${why}, so Packet Lens read it from disk. The trace and the flow diagram work; hovers, CodeLens, outline, diagnostics and line highlights ${what}.`;
}

export function tooLargeNote(name: string, bytes: number, limitMB: number): string {
  return `${name} is ${mb(bytes)}, above packetlens.limits.maxFileSizeMB (${limitMB} MB): raise the limit to trace it.`;
}
