import styles from './menu.module.css';

/**
 * The menu's panel, for a popup that is no ARIA menu (the header's user menu is a
 * disclosure, so Tab moves through it): the same look, placed with `data-placement`.
 */
export const menuPanelClassName = styles.menu;
