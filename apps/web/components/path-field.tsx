"use client";
import { useState, type CSSProperties } from "react";

/**
 * The Path field of the script and flow editors. A new item starts at `u/<me>/`, which is not yet
 * a path: until the author types in the field, what is missing is a hint, not an error in red.
 * An error from the server (`serverError`) shows at once.
 */
export function PathField({
  value,
  onChange,
  problem,
  serverError,
  disabled,
  className,
  style,
}: {
  value: string;
  onChange: (next: string) => void;
  /** What is wrong with the path as typed (lib/script-path.ts), or null. */
  problem: string | null;
  serverError?: string | null;
  disabled?: boolean;
  className?: string;
  style?: CSSProperties;
}) {
  const [touched, setTouched] = useState(false);
  const error = (touched ? problem : null) ?? serverError ?? null;
  const hint = !error && problem ? problem : null;
  return (
    <label className={className} style={style}>
      Path <span className="hint">u/&lt;user&gt;/&lt;name&gt; or f/&lt;folder&gt;/&lt;name&gt;</span>
      <input
        name="path"
        value={value}
        disabled={disabled}
        aria-invalid={!!error}
        onChange={(event) => {
          setTouched(true);
          onChange(event.target.value);
        }}
      />
      {error && (
        <span className="field-error" data-testid="path-error">
          {error}
        </span>
      )}
      {hint && (
        <span className="hint" data-testid="path-hint">
          {hint}
        </span>
      )}
    </label>
  );
}
