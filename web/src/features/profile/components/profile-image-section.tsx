import { useRef, type ChangeEvent } from 'react';
import { useTranslation } from 'react-i18next';
import { Button } from '@/components/button';
import { FormAlert } from '@/components/form-alert';
import { Spinner } from '@/components/spinner';
import { toast } from '@/components/toast';
import { useAuthStore } from '@/features/auth';
import { useAsyncAction } from '@/hooks/use-async-action';
import { useMediaQuery } from '@/hooks/use-media-query';
import type { User } from '@/types/generated';
import { profileApi } from '../api/profile-api';
import { IMAGE_ACCEPT, IMAGE_MAX_MB, validateImageFile } from '../lib/profile-validation';
import styles from './profile-page.module.css';
import { ProfileSection } from './profile-section';

/** Phones and tablets, where `capture` opens the front camera. */
const TOUCH = '(pointer: coarse)';

/**
 * The picture: from the gallery (any device) or the camera (touch devices). The file
 * inputs stay hidden behind ordinary buttons, which are focusable and labelled.
 */
export function ProfileImageSection({ user }: { user: User }) {
  const { t } = useTranslation(['profile', 'errors']);
  const updateUser = useAuthStore((s) => s.updateUser);
  const isTouch = useMediaQuery(TOUCH);
  const galleryInput = useRef<HTMLInputElement>(null);
  const cameraInput = useRef<HTMLInputElement>(null);
  const upload = useAsyncAction();
  const removal = useAsyncAction();
  const busy = upload.pending || removal.pending;

  const onFileChosen = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0];
    // Cleared so that choosing the same file again still fires a change.
    event.target.value = '';
    if (!file) return;
    removal.setError(null);
    const problem = validateImageFile(file);
    if (problem) {
      upload.setError(t(`image.errors.${problem}`, { max: IMAGE_MAX_MB }));
      return;
    }
    await upload.run(async () => {
      const { profileImage } = await profileApi.uploadImage(file);
      updateUser({ profileImage });
      toast.positive(t('image.uploaded'), { timeout: 3000 });
    }, t('errors:fileUploadError'));
  };

  const onRemove = async () => {
    upload.setError(null);
    await removal.run(async () => {
      await profileApi.removeImage();
      updateUser({ profileImage: null });
      toast.positive(t('image.removed'), { timeout: 3000 });
    });
  };

  return (
    <ProfileSection title={t('image.title')}>
      <FormAlert>{upload.error ?? removal.error}</FormAlert>
      <div className={styles.imageRow}>
        <div className={styles.avatar} aria-busy={upload.pending || undefined}>
          {user.profileImage ? (
            <img src={user.profileImage} alt={t('image.alt', { name: user.name })} />
          ) : (
            <span aria-hidden="true">{user.name.trim().charAt(0).toUpperCase()}</span>
          )}
          {upload.pending && (
            <span className={styles.avatarBusy}>
              <Spinner label={t('image.uploading')} />
            </span>
          )}
        </div>
        <div className={styles.imageControls}>
          <div className={styles.actions}>
            <Button variant="secondary" disabled={busy} onClick={() => galleryInput.current?.click()}>
              {t('image.choose')}
            </Button>
            {isTouch && (
              <Button variant="secondary" disabled={busy} onClick={() => cameraInput.current?.click()}>
                {t('image.camera')}
              </Button>
            )}
            {user.profileImage && (
              <Button variant="ghost" disabled={upload.pending} loading={removal.pending} onClick={onRemove}>
                {t('image.remove')}
              </Button>
            )}
          </div>
          <span className={styles.hint}>{t('image.hint', { max: IMAGE_MAX_MB })}</span>
        </div>
      </div>
      <input
        ref={galleryInput}
        type="file"
        accept={IMAGE_ACCEPT}
        hidden
        tabIndex={-1}
        onChange={onFileChosen}
        data-testid="profile-image-input"
      />
      <input
        ref={cameraInput}
        type="file"
        accept={IMAGE_ACCEPT}
        capture="user"
        hidden
        tabIndex={-1}
        onChange={onFileChosen}
        data-testid="profile-camera-input"
      />
    </ProfileSection>
  );
}
