// Attachments of a prompt: files the user pasted, dropped or picked, turned into ACP content blocks. Images
// become `image` blocks (when the agent advertises promptCapabilities.image), text files embedded `resource`
// blocks (promptCapabilities.embeddedContext). Pure apart from reading the File, so node tests it.

// The raster types the transcript renders; the gateway's --max-prompt-bytes (1 MiB by default) bounds the whole
// prompt, so one image stays well under it once base64 has grown it by a third.
export const IMAGE_TYPES = ['image/png', 'image/jpeg', 'image/gif', 'image/webp'];
export const MAX_IMAGE_BYTES = 512 * 1024;
export const MAX_TEXT_BYTES = 256 * 1024;
export const MAX_ATTACHMENTS = 8;

/** What the agent accepts beyond text, from its agentCapabilities. */
export function attachCaps(agentCapabilities) {
  const pc = (agentCapabilities && agentCapabilities.promptCapabilities) || {};
  return { image: pc.image === true, file: pc.embeddedContext === true };
}

export function fmtBytes(n) {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1024 * 1024)).toFixed(1)} MB`;
}

export class AttachError extends Error {}

function base64(bytes) {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000) bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin);
}

/**
 * Reads one File into an attachment {kind: 'image'|'file', name, size, block}, or throws an AttachError whose
 * message says what is wrong and what would be accepted.
 */
export async function readAttachment(file, caps) {
  const name = String(file.name || 'pasted file');
  const type = String(file.type || '').toLowerCase();
  if (type.startsWith('image/')) {
    if (!caps.image) throw new AttachError(`“${name}”: this agent does not accept images.`);
    if (!IMAGE_TYPES.includes(type)) throw new AttachError(`“${name}” is ${type}; images can be PNG, JPEG, GIF or WebP.`);
    if (file.size > MAX_IMAGE_BYTES) throw new AttachError(`“${name}” is ${fmtBytes(file.size)}; an image can be at most ${fmtBytes(MAX_IMAGE_BYTES)}.`);
    const bytes = new Uint8Array(await file.arrayBuffer());
    return { kind: 'image', name, size: bytes.length, block: { type: 'image', mimeType: type, data: base64(bytes) } };
  }
  if (!caps.file) {
    throw new AttachError(caps.image ? `“${name}”: this agent accepts images only.` : `“${name}”: this agent does not accept files.`);
  }
  if (file.size > MAX_TEXT_BYTES) throw new AttachError(`“${name}” is ${fmtBytes(file.size)}; a text file can be at most ${fmtBytes(MAX_TEXT_BYTES)}.`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  let text;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = null;
  }
  if (text === null || text.includes('\0')) throw new AttachError(`“${name}” is not a UTF-8 text file.`);
  const resource = { uri: 'file:///' + encodeURIComponent(name), mimeType: type || 'text/plain', text };
  return { kind: 'file', name, size: bytes.length, block: { type: 'resource', resource } };
}

/** The prompt's content blocks: the text (when there is any), then the attachments in order. */
export function promptBlocks(text, attachments) {
  const blocks = [];
  if (text.trim()) blocks.push({ type: 'text', text });
  for (const a of attachments) blocks.push(a.block);
  return blocks;
}

/** The file name of an embedded resource's uri (what a chip shows). */
export function resourceName(uri) {
  const s = String(uri || '');
  const tail = s.slice(s.lastIndexOf('/') + 1) || s;
  try {
    return decodeURIComponent(tail) || 'file';
  } catch {
    return tail || 'file';
  }
}

/** Blocks of a sent message as composer items (the shape of attachments), to send or edit again. */
export function itemsOf(blocks) {
  return (blocks || []).filter((b) => b && typeof b === 'object' && b.type)
    .map((b) => ({ kind: b.type === 'resource_link' ? 'mention' : b.type, name: b.name || '', size: 0, block: b }));
}
