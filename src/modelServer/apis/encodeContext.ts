/** Per-response values the encoders need; `sequence` numbers ids (resp_N, msg_N) deterministically. */
export interface EncodeContext {
  readonly sequence: number;
  readonly model: string;
  /** Unix seconds. */
  readonly created: number;
  readonly inputTokens: number;
  readonly outputTokens: number;
}
