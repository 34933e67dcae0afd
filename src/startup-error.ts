/** `parley serve` cannot start for a reason the operator must fix (port or data dir taken): the CLI prints the message and exits 1. */
export class StartupError extends Error {}
