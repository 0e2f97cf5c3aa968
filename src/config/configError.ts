export const ConfigErrorCode = {
  notFound: "config_not_found",
  unreadable: "config_unreadable",
  invalid: "invalid_config",
} as const;
export type ConfigErrorCode = (typeof ConfigErrorCode)[keyof typeof ConfigErrorCode];

/** A config problem is never retryable: the file has to change. */
export class ConfigError extends Error {
  readonly retryable = false;
  constructor(
    readonly code: ConfigErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ConfigError";
  }
}
