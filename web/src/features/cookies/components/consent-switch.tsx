import { useId } from 'react';
import styles from './consent-switch.module.css';

interface ConsentSwitchProps {
  label: string;
  description: string;
  checked: boolean;
  /** Shown next to the label and read with the switch, e.g. "Always on". */
  badge?: string;
  disabled?: boolean;
  onChange?: (checked: boolean) => void;
}

/** One cookie category: a labelled on/off switch (a checkbox with role="switch") and its purpose. */
export function ConsentSwitch({ label, description, checked, badge, disabled = false, onChange }: ConsentSwitchProps) {
  const id = useId();
  const badgeId = `${id}-badge`;
  const descriptionId = `${id}-description`;
  return (
    <div className={styles.row}>
      <div className={styles.header}>
        <label htmlFor={id} className={styles.label}>
          {label}
        </label>
        {badge && (
          <span id={badgeId} className={styles.badge}>
            {badge}
          </span>
        )}
        <input
          id={id}
          type="checkbox"
          role="switch"
          className={styles.switch}
          checked={checked}
          disabled={disabled}
          aria-describedby={[badge && badgeId, descriptionId].filter(Boolean).join(' ')}
          onChange={(event) => onChange?.(event.target.checked)}
        />
      </div>
      <p id={descriptionId} className={styles.description}>
        {description}
      </p>
    </div>
  );
}
