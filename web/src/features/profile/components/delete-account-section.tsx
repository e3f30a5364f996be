import { useState, type FormEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { useNavigate } from 'react-router';
import { Button } from '@/components/button';
import { Dialog } from '@/components/dialog';
import { FormAlert } from '@/components/form-alert';
import { TextField } from '@/components/text-field';
import { selectUser, useAuthStore } from '@/features/auth';
import { useSubscriptionStore } from '@/features/subscription';
import { useAsyncAction } from '@/hooks/use-async-action';
import type { Subscription } from '@/types/generated';
import { profileApi } from '../api/profile-api';
import styles from './profile-page.module.css';
import { ProfileSection } from './profile-section';

/** GitHub's way: the address typed again, whatever its case and surrounding spaces. */
function confirmsEmail(typed: string, email: string): boolean {
  return typed.trim().toLowerCase() === email.trim().toLowerCase() && typed.trim() !== '';
}

/**
 * Deletion after a dialog that says what goes and what stays, and that unlocks only once
 * the user typed their own e-mail address (the server asks for no password). The server
 * also sends this tab `session.revoked` (account_deleted), which may log it out before the
 * answer arrives; both paths end signed out on `/`, told "Your account has been deleted."
 */
export function DeleteAccountSection() {
  const { t } = useTranslation(['profile', 'common']);
  const user = useAuthStore(selectUser);
  const beginAccountDeletion = useAuthStore((s) => s.beginAccountDeletion);
  const abortAccountDeletion = useAuthStore((s) => s.abortAccountDeletion);
  const accountDeleted = useAuthStore((s) => s.accountDeleted);
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const [typed, setTyped] = useState('');
  const action = useAsyncAction();

  const close = () => {
    if (action.pending) return;
    setOpen(false);
    setTyped('');
    action.setError(null);
  };

  const confirmed = user ? confirmsEmail(typed, user.email) : false;

  const onConfirm = async (event: FormEvent) => {
    event.preventDefault();
    if (!confirmed) return;
    // The server ends every session while it answers: this tab's socket and any call on
    // its way may see the token refused before the answer comes, which is no expiry.
    beginAccountDeletion();
    const deleted = await action.run(() => profileApi.deleteAccount().then(() => undefined));
    if (!deleted) {
      abortAccountDeletion();
      return;
    }
    accountDeleted();
    await navigate('/', { replace: true });
  };

  return (
    <ProfileSection title={t('delete.title')} tone="danger">
      <p className={styles.muted}>{t('delete.intro')}</p>
      <div className={styles.actions}>
        <Button variant="danger" onClick={() => setOpen(true)}>
          {t('delete.open')}
        </Button>
      </div>
      {open && user && (
        <Dialog open onClose={close} title={t('delete.dialogTitle')}>
          <form className={styles.form} onSubmit={onConfirm} noValidate>
            <p className={styles.dialogText}>{t('delete.dialogText')}</p>
            <div>
              <p className={styles.dialogText}>{t('delete.deletedTitle')}</p>
              <ul className={styles.deletedList}>
                <li>{t('delete.itemConversations')}</li>
                <li>{t('delete.itemFiles')}</li>
                <li>{t('delete.itemShares')}</li>
                <li>{t('delete.itemAccount')}</li>
              </ul>
            </div>
            <PlanNotice />
            <p className={styles.dialogText}>{t('delete.kept')}</p>
            <p className={styles.dialogText}>{t('delete.loggedOut')}</p>
            <FormAlert>{action.error}</FormAlert>
            <TextField
              label={t('delete.confirmLabel', { email: user.email })}
              className={styles.confirmField}
              type="text"
              inputMode="email"
              autoComplete="off"
              autoCapitalize="none"
              autoCorrect="off"
              spellCheck={false}
              value={typed}
              onChange={(e) => setTyped(e.target.value)}
              data-testid="delete-confirm-email"
            />
            <div className={`${styles.actions} ${styles.actionsEnd}`}>
              <Button variant="secondary" disabled={action.pending} onClick={close}>
                {t('common:actions.cancel')}
              </Button>
              <Button type="submit" variant="danger" disabled={!confirmed} loading={action.pending}>
                {t('delete.confirm')}
              </Button>
            </div>
          </form>
        </Dialog>
      )}
    </ProfileSection>
  );
}

/** What becomes of a paid plan: it ends with the account, renewing or not; no refund. */
function PlanNotice() {
  const { t, i18n } = useTranslation('profile');
  const subscription = useSubscriptionStore((s) => s.subscription);
  const notice = planNotice(subscription);
  if (!notice) return null;
  const date = new Intl.DateTimeFormat(i18n.resolvedLanguage ?? i18n.language, { dateStyle: 'long' }).format(
    new Date(notice.endDate),
  );
  const text =
    notice.kind === 'renews'
      ? t('delete.planRenews', { plan: notice.plan, date })
      : t('delete.planEnds', { plan: notice.plan, date });
  return (
    <p className={styles.dialogText} data-testid="delete-plan-notice">
      {text}
    </p>
  );
}

function planNotice(
  subscription: Subscription | null,
): { kind: 'renews' | 'ends'; plan: string; endDate: string } | null {
  if (!subscription) return null;
  const { data, subscriptionPlan } = subscription;
  if (data.planType === 'free' || !data.endDate) return null;
  return { kind: data.autoRenew ? 'renews' : 'ends', plan: subscriptionPlan.name, endDate: data.endDate };
}
