/** Three significant digits, no exponent, thousands grouped: 1234 → "1,234", 0.01234 → "0.0123". */
export function format(value: number | undefined | null): string {
  if (value === undefined || value === null || Number.isNaN(value)) return '–';
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '-∞';
  const abs = Math.abs(value);
  if (abs >= 100) return Math.round(value).toLocaleString('en-US');
  if (abs === 0) return '0';
  const digits = Math.max(0, 2 - Math.floor(Math.log10(abs)));
  return value.toFixed(Math.min(digits, 4));
}
