import { createHash, randomBytes } from "node:crypto";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { GuestAttachment } from "../../contracts/entities/guestShares.js";

/**
 * A guest message's attachments (docs/guest-share.md): the bytes live in
 * `<root>/<shareId>/<attachmentId>` (root is `<state-dir>/guest-attachments`),
 * never in the event log, which records only each one's description.
 */

/** An attachment as a guest uploads it. */
export interface GuestUpload {
  readonly name: string;
  readonly type: string;
  readonly data: Buffer;
}

/**
 * What an attachment's bytes must start with for its declared type: images
 * and PDF by their signature, text types by being UTF-8 without NUL bytes.
 * One table: a type not in it is not accepted (GUEST_ATTACHMENT_TYPES).
 */
const SIGNATURES: Readonly<Record<string, (data: Buffer) => boolean>> = {
  "image/png": (data) => startsWith(data, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
  "image/jpeg": (data) => startsWith(data, [0xff, 0xd8, 0xff]),
  "image/gif": (data) => data.subarray(0, 4).toString("latin1") === "GIF8",
  "image/webp": (data) => data.subarray(0, 4).toString("latin1") === "RIFF" && data.subarray(8, 12).toString("latin1") === "WEBP",
  "application/pdf": (data) => data.subarray(0, 5).toString("latin1") === "%PDF-",
  "text/plain": isText,
  "text/markdown": isText,
  "text/csv": isText,
  "application/json": isText,
};

function startsWith(data: Buffer, bytes: readonly number[]): boolean {
  return data.length >= bytes.length && bytes.every((byte, index) => data[index] === byte);
}

function isText(data: Buffer): boolean {
  if (data.includes(0)) return false;
  try {
    new TextDecoder("utf-8", { fatal: true }).decode(data);
    return true;
  } catch {
    return false;
  }
}

/** Why an upload's bytes are not what its type says, or null. */
export function contentProblem(upload: GuestUpload): string | null {
  const matches = SIGNATURES[upload.type];
  if (matches === undefined || matches(upload.data)) return null;
  return `attachment ${upload.name} is not ${upload.type}: its content does not match the type`;
}

/** The directory of one share's attachments. */
export function shareAttachmentsDir(root: string, shareId: string): string {
  return join(root, shareId);
}

/** The file of one attachment. */
export function attachmentPath(root: string, shareId: string, attachmentId: string): string {
  return join(shareAttachmentsDir(root, shareId), attachmentId);
}

/** Each upload's description, under a fresh id. */
export function describeUploads(uploads: readonly GuestUpload[]): GuestAttachment[] {
  return uploads.map((upload) => ({
    id: randomBytes(12).toString("base64url"),
    name: upload.name,
    type: upload.type,
    size: upload.data.length,
    sha256: createHash("sha256").update(upload.data).digest("hex"),
  }));
}

/** Write each upload to its file: to a temporary name, then renamed, so a file that exists is whole. */
export async function storeUploads(root: string, shareId: string, uploads: readonly GuestUpload[], described: readonly GuestAttachment[]): Promise<void> {
  const dir = shareAttachmentsDir(root, shareId);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  for (const [index, upload] of uploads.entries()) {
    const path = attachmentPath(root, shareId, described[index]!.id);
    const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
    try {
      await writeFile(temporary, upload.data, { mode: 0o600 });
      await rename(temporary, path);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }
}

/** Remove the files of these attachments (a refused submit, a dismissed message). */
export async function removeAttachments(root: string, shareId: string, attachments: readonly Pick<GuestAttachment, "id">[]): Promise<void> {
  for (const attachment of attachments) await rm(attachmentPath(root, shareId, attachment.id), { force: true });
}
