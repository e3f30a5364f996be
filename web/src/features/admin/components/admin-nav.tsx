import { useTranslation } from 'react-i18next';
import { NavLink } from 'react-router';
import styles from './admin.module.css';

/** The console's sections; the current one is marked (`aria-current`) by NavLink. */
export function AdminNav() {
  const { t } = useTranslation('admin');
  return (
    <nav aria-label={t('nav.label')} className={styles.adminNav}>
      <NavLink to="/admin" end className={styles.adminNavLink} data-testid="admin-nav-overview">
        {t('nav.overview')}
      </NavLink>
      <NavLink to="/admin/users" className={styles.adminNavLink} data-testid="admin-nav-users">
        {t('nav.users')}
      </NavLink>
      <NavLink to="/admin/audit" className={styles.adminNavLink} data-testid="admin-nav-audit">
        {t('nav.audit')}
      </NavLink>
    </nav>
  );
}
