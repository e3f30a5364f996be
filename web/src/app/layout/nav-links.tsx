import type { ReactNode } from 'react';
import { useTranslation } from 'react-i18next';
import { NavLink } from 'react-router';
import { ChatIcon, SettingsIcon, UserIcon } from '@/components/icons';
import styles from './nav-links.module.css';

const LINKS: { to: string; key: 'nav.chat' | 'nav.settings' | 'nav.profile'; icon: ReactNode }[] = [
  { to: '/chat', key: 'nav.chat', icon: <ChatIcon /> },
  { to: '/settings', key: 'nav.settings', icon: <SettingsIcon /> },
  { to: '/profile', key: 'nav.profile', icon: <UserIcon /> },
];

/** The main navigation; NavLink marks the current page with aria-current. */
export function NavLinks({ vertical = false }: { vertical?: boolean }) {
  const { t } = useTranslation();
  return (
    <ul className={[styles.list, vertical && styles.vertical].filter(Boolean).join(' ')}>
      {LINKS.map(({ to, key, icon }) => (
        <li key={to}>
          <NavLink to={to} className={styles.link}>
            {icon}
            {t(key)}
          </NavLink>
        </li>
      ))}
    </ul>
  );
}
