// String formats checked before a job runs. date-time follows RFC 3339 (`T` or a space between date and
// time, seconds and offset optional: what `datetime.fromisoformat` and `new Date()` both accept).

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:[Zz]|[+-](\d{2}):?(\d{2}))?$/;
const UUID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const EMAIL = /^[^\s@]+@[^\s@]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function validDate(year: string, month: string, day: string): boolean {
  const m = Number(month);
  const d = Number(day);
  if (m < 1 || m > 12 || d < 1) return false;
  // Day 0 of the next month is the last day of this one (UTC, so no DST surprises).
  return d <= new Date(Date.UTC(Number(year), m, 0)).getUTCDate();
}

export function isDate(text: string): boolean {
  const m = DATE.exec(text);
  return !!m && validDate(m[1] as string, m[2] as string, m[3] as string);
}

export function isDateTime(text: string): boolean {
  const m = DATE_TIME.exec(text);
  if (!m || !validDate(m[1] as string, m[2] as string, m[3] as string)) return false;
  const [hour, minute, second, offsetHour, offsetMinute] = [m[4], m[5], m[6], m[7], m[8]].map(Number);
  return (
    (hour as number) < 24 &&
    (minute as number) < 60 &&
    (m[6] === undefined || (second as number) <= 60) &&
    (m[7] === undefined || ((offsetHour as number) < 24 && (offsetMinute as number) < 60))
  );
}

export function isBase64(text: string): boolean {
  return BASE64.test(text);
}

/** The format a string argument must have, checked by name; unknown formats are not checked. */
export function checkFormat(format: string | undefined, text: string): boolean {
  switch (format) {
    case "date-time":
      return isDateTime(text);
    case "date":
      return isDate(text);
    case "uuid":
      return UUID.test(text);
    case "email":
      return EMAIL.test(text);
    case "base64":
      return isBase64(text);
    default:
      return true;
  }
}
