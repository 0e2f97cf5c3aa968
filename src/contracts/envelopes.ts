import { z } from "zod";

/** A rejection reason: a stable code plus a human-readable message. */
export const RejectionSchema = z.object({
  code: z.string().min(1),
  message: z.string(),
});
export type Rejection = z.infer<typeof RejectionSchema>;

/**
 * The stored answer to one command, keyed by commandId. A repeated commandId
 * gets this record back and writes nothing.
 */
export const CommandReceiptSchema = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("accepted"),
    commandId: z.string(),
    commandType: z.string(),
    /** Global sequence of the command's last event; the log position before it when it emitted none. */
    sequence: z.number().int().nonnegative(),
    eventCount: z.number().int().nonnegative(),
    acceptedAt: z.string(),
  }),
  z.object({
    status: z.literal("rejected"),
    commandId: z.string(),
    commandType: z.string(),
    rejection: RejectionSchema,
    rejectedAt: z.string(),
  }),
]);
export type CommandReceipt = z.infer<typeof CommandReceiptSchema>;
export type AcceptedReceipt = Extract<CommandReceipt, { status: "accepted" }>;
export type RejectedReceipt = Extract<CommandReceipt, { status: "rejected" }>;

/** A domain event before it is stored: `{ type, data }` plus the stream (thread) it belongs to. */
export interface NewEvent {
  readonly type: string;
  /** The thread the event belongs to, or "" for environment-wide events. */
  readonly streamId: string;
  readonly data: unknown;
}

/** An event as the log holds it. `sequence` is global, gap-free and strictly increasing. */
export interface StoredEvent extends NewEvent {
  readonly sequence: number;
  readonly eventId: string;
  readonly commandId: string;
  readonly occurredAt: string;
}

/**
 * A side effect to run after the command commits (DESIGN.md invariant 4).
 * `replaySafe` effects may run again after a crash; process-bound effects are
 * lost with the process and their run is reconciled on boot.
 */
export interface NewOutboxEffect {
  readonly kind: string;
  readonly streamId: string;
  readonly payload: unknown;
  readonly replaySafe: boolean;
}

export const OutboxStatus = {
  pending: "pending",
  leased: "leased",
  done: "done",
  failed: "failed",
} as const;
export type OutboxStatus = (typeof OutboxStatus)[keyof typeof OutboxStatus];

export interface OutboxRow extends NewOutboxEffect {
  readonly id: string;
  readonly commandId: string;
  readonly status: OutboxStatus;
  readonly attempts: number;
  readonly leaseOwner: string | null;
  /** Epoch milliseconds. */
  readonly leaseExpiresAt: number | null;
  /** Epoch milliseconds: the row is not claimable before this time. */
  readonly availableAt: number;
  readonly lastError: string | null;
  readonly createdAt: string;
}
