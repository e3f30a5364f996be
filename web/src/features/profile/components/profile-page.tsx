import { useTranslation } from 'react-i18next';
import { PageSpinner } from '@/components/spinner';
import { selectUser, useAuthStore } from '@/features/auth';
import { useDocumentTitle } from '@/hooks/use-document-title';
import { ChangePasswordForm } from './change-password-form';
import { DeleteAccountSection } from './delete-account-section';
import { ProfileDetailsForm } from './profile-details-form';
import { ProfileImageSection } from './profile-image-section';
import styles from './profile-page.module.css';

/** `/profile`: picture, name, password change and account deletion (SPEC §1, §2, §5). */
export function ProfilePage() {
  const { t } = useTranslation('profile');
  useDocumentTitle(t('title'));
  const user = useAuthStore(selectUser);
  // The guard renders this page only once signed in; the user can still vanish on logout.
  if (!user) return <PageSpinner />;
  return (
    <div className={styles.page}>
      <h1>{t('title')}</h1>
      <ProfileImageSection user={user} />
      <ProfileDetailsForm user={user} />
      <ChangePasswordForm email={user.email} />
      <DeleteAccountSection />
    </div>
  );
}
