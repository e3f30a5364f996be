import type { ComponentPropsWithRef } from 'react';
import { buttonClassName, type ButtonLook } from './button-class-name';
import { Spinner } from './spinner';

export interface ButtonProps extends ComponentPropsWithRef<'button'>, ButtonLook {
  /** Shows a spinner and blocks clicks while an action runs. */
  loading?: boolean;
}

export function Button({
  variant,
  size,
  iconOnly,
  block,
  loading = false,
  disabled,
  className,
  children,
  type = 'button',
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type}
      className={[buttonClassName({ variant, size, iconOnly, block }), className].filter(Boolean).join(' ')}
      disabled={disabled || loading}
      aria-busy={loading || undefined}
      {...rest}
    >
      {loading && <Spinner size="small" decorative />}
      {children}
    </button>
  );
}
