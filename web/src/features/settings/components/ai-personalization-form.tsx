import { useId, useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { Checkbox } from '@/components/checkbox';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { toast } from '@/components/toast';
import { useAuthStore } from '@/features/auth';
import { errorMessage, isApiError } from '@/lib/api-client';
import type { AiPersonalization } from '@/types/generated';
import { settingsApi } from '../api/settings-api';
import {
  AI_LIMITS,
  charLength,
  normalizeAiPersonalization,
  validateAiPersonalization,
  type AiField,
  type AiFieldError,
} from '../lib/ai-personalization-validation';
import styles from './settings-page.module.css';
import { SettingsSection } from './settings-section';

type ServerFieldErrors = Partial<Record<AiField, string>>;

function isAiField(field: string | undefined): field is AiField {
  return field === 'userName' || field === 'userInfo';
}

/**
 * SPEC §1 "AI personalisation". Until edited, the form shows the account's values, so a
 * `settings.updated` from another tab shows up here; once edited, the edit is kept.
 */
export function AiPersonalizationForm({ value: saved }: { value: AiPersonalization }) {
  const { t } = useTranslation(['settings', 'validation']);
  const applySettings = useAuthStore((s) => s.applySettings);
  const [draft, setDraft] = useState<AiPersonalization | null>(null);
  const [pending, setPending] = useState(false);
  const [formError, setFormError] = useState<string | null>(null);
  const [serverErrors, setServerErrors] = useState<ServerFieldErrors>({});
  const value = draft ?? saved;
  const errors = validateAiPersonalization(value);

  const edit = (changes: Partial<AiPersonalization>) => {
    setDraft({ ...value, ...changes });
    setServerErrors({});
  };

  const fieldError = (field: AiField): string | undefined => {
    const key: AiFieldError | undefined = errors[field];
    if (key) return t(`ai.${key}`, { max: AI_LIMITS[field] });
    return serverErrors[field];
  };

  const onSubmit = async (event: FormEvent) => {
    event.preventDefault();
    if (Object.keys(errors).length > 0) {
      setFormError(t('validation:formInvalid'));
      return;
    }
    setFormError(null);
    setServerErrors({});
    setPending(true);
    try {
      const { settings } = await settingsApi.saveAiPersonalization(normalizeAiPersonalization(value));
      applySettings(settings);
      setDraft(null);
      toast.positive(t('ai.saved'), { timeout: 3000 });
    } catch (caught) {
      const message = errorMessage(caught);
      if (message && isApiError(caught) && isAiField(caught.field)) setServerErrors({ [caught.field]: message });
      else setFormError(message);
    } finally {
      setPending(false);
    }
  };

  return (
    <SettingsSection id="ai" title={t('ai.title')}>
      <p className={styles.muted}>{t('ai.intro')}</p>
      <form className={styles.form} onSubmit={onSubmit} noValidate>
        <FormAlert>{formError}</FormAlert>
        <Checkbox
          label={t('ai.enabled')}
          checked={value.enabled}
          onChange={(event) => edit({ enabled: event.target.checked })}
          data-testid="settings-ai-enabled"
        />
        <TextField
          label={t('ai.userName')}
          autoComplete="nickname"
          value={value.userName}
          onChange={(event) => edit({ userName: event.target.value })}
          hint={t('ai.counter', { length: charLength(value.userName.trim()), max: AI_LIMITS.userName })}
          error={fieldError('userName')}
          data-testid="settings-ai-user-name"
        />
        <TextAreaField
          label={t('ai.userInfo')}
          value={value.userInfo}
          onChange={(userInfo) => edit({ userInfo })}
          counter={t('ai.counter', { length: charLength(value.userInfo.trim()), max: AI_LIMITS.userInfo })}
          over={errors.userInfo === 'tooLong'}
          error={fieldError('userInfo')}
          data-testid="settings-ai-user-info"
        />
        <div className={`${styles.actions} ${styles.actionsEnd}`}>
          <Button type="submit" loading={pending} data-testid="settings-ai-save">
            {t('ai.save')}
          </Button>
        </div>
      </form>
    </SettingsSection>
  );
}

function TextAreaField({
  label,
  value,
  onChange,
  counter,
  over,
  error,
  'data-testid': testId,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  counter: string;
  over: boolean;
  error: string | undefined;
  'data-testid'?: string;
}) {
  const id = useId();
  const counterId = `${id}-counter`;
  const errorId = `${id}-error`;
  return (
    <div className={styles.field}>
      <label htmlFor={id} className={styles.label}>
        {label}
      </label>
      <textarea
        id={id}
        className={styles.textarea}
        rows={5}
        value={value}
        onChange={(event) => onChange(event.target.value)}
        aria-invalid={error ? true : undefined}
        aria-describedby={[counterId, error && errorId].filter(Boolean).join(' ')}
        data-testid={testId}
      />
      <div className={styles.fieldFooter}>
        {error && (
          <span id={errorId} className={styles.error}>
            {error}
          </span>
        )}
        <span id={counterId} className={[styles.counter, over && styles.counterOver].filter(Boolean).join(' ')}>
          {counter}
        </span>
      </div>
    </div>
  );
}
