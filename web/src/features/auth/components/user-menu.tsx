import { useEffect, useId, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';
import { Link, useNavigate } from 'react-router';
import { SettingsIcon, ShieldIcon, UserIcon } from '@/components/icons';
import { menuPanelClassName } from '@/components/menu';
import { toast } from '@/components/toast';
import type { User } from '@/types/generated';
import { useAuthStore } from '../stores/auth-store';
import styles from './user-menu.module.css';

export function UserAvatar({ user }: { user: Pick<User, 'name' | 'profileImage'> }) {
  return (
    <span className={styles.avatar} aria-hidden="true">
      {user.profileImage ? <img src={user.profileImage} alt="" /> : user.name.trim().charAt(0).toUpperCase()}
    </span>
  );
}

/**
 * The signed-in user's menu: a disclosure (button + list) rather than an ARIA menu, so
 * ordinary Tab navigation works; Escape and a click outside close it.
 */
export function UserMenu() {
  const { t } = useTranslation(['common', 'auth']);
  const user = useAuthStore((s) => s.user);
  const logout = useAuthStore((s) => s.logout);
  const navigate = useNavigate();
  const [open, setOpen] = useState(false);
  const wrapper = useRef<HTMLDivElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const menuId = useId();

  useEffect(() => {
    if (!open) return;
    const onPointerDown = (event: PointerEvent) => {
      if (!wrapper.current?.contains(event.target as Node)) setOpen(false);
    };
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === 'Escape') {
        setOpen(false);
        trigger.current?.focus();
      }
    };
    document.addEventListener('pointerdown', onPointerDown);
    document.addEventListener('keydown', onKeyDown);
    return () => {
      document.removeEventListener('pointerdown', onPointerDown);
      document.removeEventListener('keydown', onKeyDown);
    };
  }, [open]);

  if (!user) return null;

  const onLogout = async () => {
    setOpen(false);
    logout();
    toast.info(t('auth:session.loggedOut'), { timeout: 3000 });
    await navigate('/');
  };

  return (
    <div className={styles.wrapper} ref={wrapper}>
      <button
        ref={trigger}
        type="button"
        className={styles.trigger}
        aria-expanded={open}
        aria-controls={menuId}
        aria-label={t('header.userMenu', { name: user.name })}
        onClick={() => setOpen((o) => !o)}
      >
        <UserAvatar user={user} />
        <span className={styles.name}>{user.name}</span>
      </button>
      {open && (
        <ul id={menuId} className={`${menuPanelClassName} ${styles.menu}`} data-placement="below-end">
          <li className={styles.email}>{user.email}</li>
          <li>
            <Link className={styles.item} to="/profile" onClick={() => setOpen(false)}>
              <UserIcon /> {t('nav.profile')}
            </Link>
          </li>
          <li>
            <Link className={styles.item} to="/settings" onClick={() => setOpen(false)}>
              <SettingsIcon /> {t('nav.settings')}
            </Link>
          </li>
          {/* The operator console, for admins only (issue 34); the server checks the role too. */}
          {user.role === 'admin' && (
            <li>
              <Link className={styles.item} to="/admin" onClick={() => setOpen(false)} data-testid="user-menu-admin">
                <ShieldIcon /> {t('nav.admin')}
              </Link>
            </li>
          )}
          <li>
            <button type="button" className={styles.item} onClick={onLogout}>
              {t('header.logout')}
            </button>
          </li>
        </ul>
      )}
    </div>
  );
}
