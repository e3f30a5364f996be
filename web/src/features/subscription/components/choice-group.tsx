import { useId, type ReactNode } from 'react';
import styles from './forms.module.css';

export interface Choice<V extends string> {
  value: V;
  label: string;
  hint?: ReactNode;
  disabled?: boolean;
}

/** A fieldset of radio buttons; arrow keys move between them, as the browser does. */
export function ChoiceGroup<V extends string>({
  legend,
  value,
  choices,
  onChange,
  name,
  inline = false,
  columns = false,
}: {
  legend: string;
  value: V;
  choices: Choice<V>[];
  onChange: (value: V) => void;
  name?: string;
  /** Side by side, each as wide as its words. */
  inline?: boolean;
  /** Side by side in equal columns where they fit (choices with hints). */
  columns?: boolean;
}) {
  const generated = useId();
  const groupName = name ?? generated;
  return (
    <fieldset className={styles.fieldset}>
      <legend className={styles.legend}>{legend}</legend>
      <div className={[styles.choices, inline && styles.inline, columns && styles.columns].filter(Boolean).join(' ')}>
        {choices.map((choice) => {
          const id = `${groupName}-${choice.value}`;
          return (
            <div key={choice.value} className={styles.choice} data-disabled={choice.disabled || undefined}>
              <input
                id={id}
                type="radio"
                name={groupName}
                value={choice.value}
                checked={value === choice.value}
                disabled={choice.disabled}
                aria-describedby={choice.hint ? `${id}-hint` : undefined}
                onChange={() => onChange(choice.value)}
              />
              <div className={styles.choiceText}>
                <label htmlFor={id} className={styles.choiceLabel}>
                  {choice.label}
                </label>
                {choice.hint && (
                  <span id={`${id}-hint`} className={styles.hint}>
                    {choice.hint}
                  </span>
                )}
              </div>
            </div>
          );
        })}
      </div>
    </fieldset>
  );
}
