export type Level = "debug" | "info" | "warn" | "error";
const ORDER: Record<Level | "silent", number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

/** Structured logger: one JSON line per entry on stderr. Never pass credentials in fields. */
export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
}

/** Bearer values that may appear in a URL or message, masked before anything is written. */
const SECRET_PATTERN = /\b(sk|rk|dtok|up|rct|whsec)_[A-Za-z0-9_]{8,}/g;
export function redact(text: string): string {
  return text.replace(SECRET_PATTERN, (m) => `${m.slice(0, m.indexOf("_") + 1)}[redacted]`);
}

/** Where entries go once their level passes: by default one JSON line each on stderr. */
export type LogSink = (level: Level, msg: string, fields: Record<string, unknown>) => void;

const jsonLines: LogSink = (level, msg, fields) => {
  const line = JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields });
  process.stderr.write(`${redact(line)}\n`);
};

export function createLogger(level: Level | "silent" = "info", sink: LogSink = jsonLines): Logger {
  const write = (l: Level) => (msg: string, fields?: Record<string, unknown>) => {
    if (ORDER[l] < ORDER[level]) return;
    sink(l, msg, fields ?? {});
  };
  return { debug: write("debug"), info: write("info"), warn: write("warn"), error: write("error") };
}
