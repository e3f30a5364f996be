import { useId, type SelectHTMLAttributes } from 'react';
import styles from './settings-page.module.css';

export interface SelectFieldProps<V extends string>
  extends Omit<SelectHTMLAttributes<HTMLSelectElement>, 'id' | 'value' | 'onChange'> {
  label: string;
  hint?: string;
  value: V;
  options: readonly { value: V; label: string; lang?: string }[];
  onValueChange: (value: V) => void;
}

/** A labelled native select: keyboard, screen readers and the phone's own picker for free. */
export function SelectField<V extends string>({
  label,
  hint,
  value,
  options,
  onValueChange,
  ...selectProps
}: SelectFieldProps<V>) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  return (
    <div className={styles.field}>
      <label htmlFor={id} className={styles.label}>
        {label}
      </label>
      <select
        id={id}
        className={styles.select}
        value={value}
        aria-describedby={hintId}
        onChange={(event) => {
          const next = options.find((option) => option.value === event.target.value);
          if (next) onValueChange(next.value);
        }}
        {...selectProps}
      >
        {options.map((option) => (
          <option key={option.value} value={option.value} lang={option.lang}>
            {option.label}
          </option>
        ))}
      </select>
      {hint && (
        <span id={hintId} className={styles.hint}>
          {hint}
        </span>
      )}
    </div>
  );
}
