/**
 * RFC 4180 CSV, CRLF line ends. A cell that a spreadsheet would run as a formula (it starts
 * with = + - @, a tab or a carriage return) is led by a single quote: a reason is free text
 * someone typed, and the file is opened by people in Excel (OWASP "CSV injection").
 */
export function toCsv(header: readonly string[], rows: readonly (readonly (string | null)[])[]): string {
  return [header, ...rows].map((row) => row.map(cell).join(",")).join("\r\n") + "\r\n";
}

function cell(value: string | null): string {
  if (value === null) return "";
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}
