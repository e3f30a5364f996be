import { useCallback } from 'react';
import { useTranslation } from 'react-i18next';
import type { ValidationKey } from '@/lib/validation';

/** Turns the keys of src/lib/validation.ts into text in the current language. */
export function useValidationText(): (key: ValidationKey | null | undefined) => string | undefined {
  const { t } = useTranslation('validation');
  return useCallback((key) => (key ? t(key) : undefined), [t]);
}
