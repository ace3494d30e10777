import { BubError } from "../kernel/errors.ts";

/**
 * A problem with the configuration. For invalid settings the message lists every problem
 * (`details.issues`, one line each: the variable or key, the bad value, what is allowed).
 */
export class ConfigError extends BubError {
  constructor(message: string, details?: Record<string, unknown>) {
    super("config", message, { details });
    this.name = "ConfigError";
  }
}
